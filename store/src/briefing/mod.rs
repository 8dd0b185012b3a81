//! What briefings read: the files fixes cited, and past sessions like the
//! one starting.

pub mod cited_files;
pub mod similar;

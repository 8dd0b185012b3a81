//! Background tasks that live exactly as long as the component that
//! started them.

use std::future::Future;
use std::sync::Mutex;

use tokio::task::JoinHandle;

/// Aborts the tasks it holds when dropped. A component keeps one (behind an
/// `Arc` when the component is cloned), and its listeners and followers end
/// when the last clone goes: a server stopped inside a longer-lived process,
/// as in the tests and benchmarks, leaves no task, connection or pool behind.
/// A task must not hold the component itself, or it would never be dropped.
#[derive(Debug, Default)]
pub struct Background(Mutex<Vec<JoinHandle<()>>>);

impl Background {
    /// Starts `task` on the current runtime.
    pub fn spawn(&self, task: impl Future<Output = ()> + Send + 'static) {
        self.hold(tokio::spawn(task));
    }

    pub fn hold(&self, task: JoinHandle<()>) {
        self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push(task);
    }
}

impl Drop for Background {
    fn drop(&mut self) {
        for task in self.0.get_mut().unwrap_or_else(std::sync::PoisonError::into_inner).drain(..) {
            task.abort();
        }
    }
}

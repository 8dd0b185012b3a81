//! The codec of every Lore service: prost's, except that a request that does
//! not decode is the client's error. tonic answers INTERNAL for it (the gRPC
//! status-code table's choice for parse errors); Lore answers
//! INVALID_ARGUMENT naming where decoding failed, e.g. invalid UTF-8 in a
//! string field or nesting past the recursion limit. Clients must never see
//! INTERNAL for their own bad input.

use std::marker::PhantomData;

use tonic::codec::{BufferSettings, Codec, DecodeBuf, Decoder};
use tonic::{Code, Status};
use tonic_prost::{ProstCodec, ProstDecoder, ProstEncoder};

/// prost's codec with decode failures mapped to INVALID_ARGUMENT.
#[derive(Debug, Clone)]
pub struct LoreCodec<T, U> {
    inner: ProstCodec<T, U>,
}

impl<T, U> Default for LoreCodec<T, U> {
    fn default() -> Self {
        Self { inner: ProstCodec::default() }
    }
}

impl<T, U> Codec for LoreCodec<T, U>
where
    T: prost::Message + Send + 'static,
    U: prost::Message + Default + Send + 'static,
{
    type Encode = T;
    type Decode = U;
    type Encoder = ProstEncoder<T>;
    type Decoder = LoreDecoder<U>;

    fn encoder(&mut self) -> Self::Encoder {
        self.inner.encoder()
    }

    fn decoder(&mut self) -> Self::Decoder {
        LoreDecoder { inner: self.inner.decoder(), message: PhantomData }
    }
}

/// prost's decoder; see [`LoreCodec`].
#[derive(Debug)]
pub struct LoreDecoder<U> {
    inner: ProstDecoder<U>,
    message: PhantomData<U>,
}

impl<U: prost::Message + Default> Decoder for LoreDecoder<U> {
    type Item = U;
    type Error = Status;

    fn decode(&mut self, buffer: &mut DecodeBuf<'_>) -> Result<Option<U>, Status> {
        self.inner.decode(buffer).map_err(|status| match status.code() {
            Code::Internal => Status::invalid_argument(describe_decode_error(status.message())),
            _ => status,
        })
    }

    fn buffer_settings(&self) -> BufferSettings {
        self.inner.buffer_settings()
    }
}

/// Most fields of a path worth showing; deeper ones are elided.
const MAX_PATH_FIELDS: usize = 4;

/// prost says "failed to decode Protobuf message: Inner.field: ...:
/// Outer.field: what went wrong", innermost first. Clients read paths
/// outermost first, like the validation errors: "action.context...: what".
fn describe_decode_error(message: &str) -> String {
    let body = message.strip_prefix("failed to decode Protobuf message: ").unwrap_or(message);
    let is_path_segment = |segment: &str| {
        segment.split_once('.').is_some_and(|(message, field)| {
            !message.is_empty()
                && !field.is_empty()
                && message.bytes().all(|byte| byte.is_ascii_alphanumeric() || byte == b'_')
                && field.bytes().all(|byte| byte.is_ascii_lowercase() || byte.is_ascii_digit() || byte == b'_')
        })
    };
    let segments: Vec<&str> = body.split(": ").collect();
    let path_len = segments.iter().take_while(|segment| is_path_segment(segment)).count();
    let description = segments[path_len..].join(": ");
    let fields: Vec<&str> = segments[..path_len]
        .iter()
        .rev()
        .filter_map(|segment| segment.split_once('.').map(|(_, field)| field))
        .collect();
    if fields.is_empty() {
        return format!("request is not a valid message: {description}");
    }
    let mut path = fields.iter().take(MAX_PATH_FIELDS).copied().collect::<Vec<_>>().join(".");
    if fields.len() > MAX_PATH_FIELDS {
        path.push_str("...");
    }
    format!("{path}: {description}")
}

#[cfg(test)]
mod tests {
    use super::describe_decode_error;

    #[test]
    fn decode_errors_read_outermost_field_first() {
        assert_eq!(
            describe_decode_error(
                "failed to decode Protobuf message: Action.error: LogActionRequest.action: invalid string value: data is not UTF-8 encoded"
            ),
            "action.error: invalid string value: data is not UTF-8 encoded"
        );
        assert_eq!(
            describe_decode_error(
                "failed to decode Protobuf message: Value.kind: Struct.fields: Value.kind: Struct.fields: Action.context: LogActionRequest.action: recursion limit reached"
            ),
            "action.context.fields.kind...: recursion limit reached"
        );
        assert_eq!(
            describe_decode_error("failed to decode Protobuf message: buffer underflow"),
            "request is not a valid message: buffer underflow"
        );
    }
}

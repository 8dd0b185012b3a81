//! Checks on the contract itself, read from the compiled descriptor set.

use prost::Message as _;
use prost_types::{DescriptorProto, FileDescriptorSet};

// Field numbers of descriptor.proto, used in source-info paths.
const FILE_MESSAGE_TYPE: i32 = 4;
const FILE_ENUM_TYPE: i32 = 5;
const FILE_SERVICE: i32 = 6;
const MESSAGE_FIELD: i32 = 2;
const MESSAGE_NESTED_TYPE: i32 = 3;
const MESSAGE_ENUM_TYPE: i32 = 4;
const ENUM_VALUE: i32 = 2;
const SERVICE_METHOD: i32 = 2;

fn lore_files() -> Vec<prost_types::FileDescriptorProto> {
    FileDescriptorSet::decode(lore_proto::FILE_DESCRIPTOR_SET)
        .unwrap()
        .file
        .into_iter()
        .filter(|file| file.package() == "lore.v1")
        .collect()
}

/// Every element that must carry a doc comment: (path, readable name).
fn documented_elements(file: &prost_types::FileDescriptorProto) -> Vec<(Vec<i32>, String)> {
    let mut elements = Vec::new();
    fn message(elements: &mut Vec<(Vec<i32>, String)>, path: Vec<i32>, descriptor: &DescriptorProto, prefix: &str) {
        let name = format!("{prefix}{}", descriptor.name());
        for (index, field) in descriptor.field.iter().enumerate() {
            let mut field_path = path.clone();
            field_path.extend([MESSAGE_FIELD, index as i32]);
            elements.push((field_path, format!("field {name}.{}", field.name())));
        }
        for (index, nested) in descriptor.nested_type.iter().enumerate() {
            if nested.options.as_ref().is_some_and(|options| options.map_entry()) {
                continue;
            }
            let mut nested_path = path.clone();
            nested_path.extend([MESSAGE_NESTED_TYPE, index as i32]);
            message(elements, nested_path, nested, &format!("{name}."));
        }
        for (index, enumeration) in descriptor.enum_type.iter().enumerate() {
            let mut enum_path = path.clone();
            enum_path.extend([MESSAGE_ENUM_TYPE, index as i32]);
            elements.push((enum_path, format!("enum {name}.{}", enumeration.name())));
        }
        elements.push((path, format!("message {name}")));
    }
    for (index, descriptor) in file.message_type.iter().enumerate() {
        message(&mut elements, vec![FILE_MESSAGE_TYPE, index as i32], descriptor, "");
    }
    for (index, enumeration) in file.enum_type.iter().enumerate() {
        elements.push((vec![FILE_ENUM_TYPE, index as i32], format!("enum {}", enumeration.name())));
        for (value_index, value) in enumeration.value.iter().enumerate() {
            // The zero value's meaning is the convention: "not given".
            if value.number() != 0 {
                elements.push((
                    vec![FILE_ENUM_TYPE, index as i32, ENUM_VALUE, value_index as i32],
                    format!("enum value {}", value.name()),
                ));
            }
        }
    }
    for (index, service) in file.service.iter().enumerate() {
        elements.push((vec![FILE_SERVICE, index as i32], format!("service {}", service.name())));
        for (method_index, method) in service.method.iter().enumerate() {
            elements.push((
                vec![FILE_SERVICE, index as i32, SERVICE_METHOD, method_index as i32],
                format!("rpc {}.{}", service.name(), method.name()),
            ));
        }
    }
    elements
}

#[test]
fn every_service_rpc_message_field_and_enum_value_has_a_doc_comment() {
    let mut undocumented = Vec::new();
    for file in lore_files() {
        let locations = &file.source_code_info.as_ref().expect("source info is kept").location;
        for (path, name) in documented_elements(&file) {
            let documented = locations
                .iter()
                .any(|location| location.path == path && !location.leading_comments().trim().is_empty());
            if !documented {
                undocumented.push(format!("{}: {name}", file.name()));
            }
        }
    }
    assert!(undocumented.is_empty(), "{} undocumented:\n{}", undocumented.len(), undocumented.join("\n"));
}

#[test]
fn the_services_are_in_package_lore_v1() {
    let services: Vec<String> =
        lore_files().iter().flat_map(|file| file.service.iter().map(|service| service.name().to_owned())).collect();
    assert_eq!(services.len(), 5, "{services:?}");
    for expected in ["ActionService", "AgentService", "KnowledgeService", "QaLearningService", "SidecarService"] {
        assert!(services.iter().any(|service| service == expected), "{expected} missing");
    }
}

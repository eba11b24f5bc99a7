//! How much host memory the instances of one call hold for their state
//! (globals, function references, imports, tables and memories of each
//! core instance), found from the component's sections before it runs.
//!
//! Instantiating a component creates a fixed set of core instances, known
//! from its instance sections (nested components included), and each core
//! instance of a module holds state of a size known from the module's
//! sections. That state lives in the host, outside any linear memory, so
//! the limits on linear memory do not bound it: 97 instances of a module
//! with a million globals hold 1.6 GB. toolhost counts it against the
//! call's `memory_mib`, refusing at load a module whose state alone does
//! not fit.

use wasmparser::{
    ComponentAlias, ComponentExternalKind, ComponentInstance, ComponentOuterAliasKind, Instance,
    Parser, Payload, TypeRef,
};

/// Bytes a core instance holds whatever its module: wasmtime's instance
/// record and the fixed part of its context.
const INSTANCE_BYTES: u64 = 1024;
/// Bytes of state per defined global (a 16-byte slot).
const GLOBAL_BYTES: u64 = 16;
/// Bytes per function: a function reference (4 pointers), and for an
/// imported one its import record (3 pointers) too.
const FUNCTION_BYTES: u64 = 32;
const IMPORTED_FUNCTION_BYTES: u64 = 24;
/// Bytes per other import (table, memory, global, tag): a record of pointers.
const IMPORT_BYTES: u64 = 24;
/// Bytes per defined table or memory: its definition record.
const DEFINITION_BYTES: u64 = 32;

/// The state of one call's instances.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct InstanceState {
    /// Core instances created when the component is instantiated.
    pub core_instances: u64,
    /// Host memory those instances hold for their state, in bytes (an
    /// upper estimate; linear memories and table elements are counted
    /// apart, as they grow).
    pub bytes: u64,
}

impl InstanceState {
    fn add(self, other: InstanceState) -> InstanceState {
        InstanceState {
            core_instances: self.core_instances.saturating_add(other.core_instances),
            bytes: self.bytes.saturating_add(other.bytes),
        }
    }
}

/// What one component (or nested component) defines, as far as counting
/// goes: its core modules' and components' costs by index, and what its
/// own instantiations create.
#[derive(Default)]
struct ComponentScope {
    modules: Vec<InstanceState>,
    components: Vec<InstanceState>,
    creates: InstanceState,
}

/// The counts of one core module.
#[derive(Default)]
struct ModuleCounts {
    globals: u64,
    functions: u64,
    imported_functions: u64,
    other_imports: u64,
    definitions: u64,
    segments: u64,
}

impl ModuleCounts {
    /// The state one instance of this module holds.
    fn state(&self) -> InstanceState {
        let bytes = INSTANCE_BYTES
            .saturating_add(self.globals.saturating_mul(GLOBAL_BYTES))
            .saturating_add(
                (self.functions.saturating_add(self.imported_functions))
                    .saturating_mul(FUNCTION_BYTES),
            )
            .saturating_add(
                self.imported_functions
                    .saturating_mul(IMPORTED_FUNCTION_BYTES),
            )
            .saturating_add(self.other_imports.saturating_mul(IMPORT_BYTES))
            .saturating_add(self.definitions.saturating_mul(DEFINITION_BYTES))
            .saturating_add(self.segments.div_ceil(8));
        InstanceState {
            core_instances: 1,
            bytes,
        }
    }
}

enum Frame {
    Component(ComponentScope),
    Module(ModuleCounts),
}

/// The state of the instances created by instantiating the component in
/// `bytes`. The bytes were checked to be a component; a section that does
/// not parse ends the count with what was counted (compiling reports it).
pub(crate) fn instance_state(bytes: &[u8]) -> InstanceState {
    let mut stack: Vec<Frame> = Vec::new();
    // The most any module or component seen so far costs: the cost of one
    // reached in a way not followed here (an export of an instance).
    let mut worst_module = InstanceState::default();
    let mut worst_component = InstanceState::default();
    for payload in Parser::new(0).parse_all(bytes) {
        let Ok(payload) = payload else { break };
        match payload {
            Payload::Version { encoding, .. } => stack.push(match encoding {
                wasmparser::Encoding::Component => Frame::Component(ComponentScope::default()),
                wasmparser::Encoding::Module => Frame::Module(ModuleCounts::default()),
            }),
            Payload::End(_) => {
                let Some(frame) = stack.pop() else { break };
                let (is_module, state) = match frame {
                    Frame::Module(counts) => (true, counts.state()),
                    Frame::Component(scope) => (false, scope.creates),
                };
                match stack.last_mut() {
                    Some(Frame::Component(parent)) if is_module => {
                        worst_module = worst_module.max_of(state);
                        parent.modules.push(state);
                    }
                    Some(Frame::Component(parent)) => {
                        worst_component = worst_component.max_of(state);
                        parent.components.push(state);
                    }
                    Some(Frame::Module(_)) => break,
                    None => return state,
                }
            }
            payload => match stack.last_mut() {
                Some(Frame::Module(counts)) => count_module(counts, &payload),
                Some(Frame::Component(_)) => {
                    count_component(&mut stack, &payload, worst_module, worst_component)
                }
                None => break,
            },
        }
    }
    stack
        .into_iter()
        .find_map(|frame| match frame {
            Frame::Component(scope) => Some(scope.creates),
            Frame::Module(_) => None,
        })
        .unwrap_or_default()
}

impl InstanceState {
    fn max_of(self, other: InstanceState) -> InstanceState {
        if other.bytes > self.bytes {
            other
        } else {
            self
        }
    }
}

fn count_module(counts: &mut ModuleCounts, payload: &Payload<'_>) {
    match payload {
        Payload::ImportSection(reader) => {
            for import in reader.clone().into_imports().flatten() {
                match import.ty {
                    TypeRef::Func(_) | TypeRef::FuncExact(_) => counts.imported_functions += 1,
                    _ => counts.other_imports += 1,
                }
            }
        }
        Payload::FunctionSection(reader) => counts.functions += u64::from(reader.count()),
        Payload::GlobalSection(reader) => counts.globals += u64::from(reader.count()),
        Payload::TableSection(reader) => counts.definitions += u64::from(reader.count()),
        Payload::MemorySection(reader) => counts.definitions += u64::from(reader.count()),
        Payload::TagSection(reader) => counts.definitions += u64::from(reader.count()),
        Payload::DataSection(reader) => counts.segments += u64::from(reader.count()),
        Payload::ElementSection(reader) => counts.segments += u64::from(reader.count()),
        _ => {}
    }
}

fn count_component(
    stack: &mut [Frame],
    payload: &Payload<'_>,
    worst_module: InstanceState,
    worst_component: InstanceState,
) {
    match payload {
        Payload::InstanceSection(reader) => {
            for instance in reader.clone().into_iter().flatten() {
                if let Instance::Instantiate { module_index, .. } = instance {
                    let Some(here) = scope(stack, 0) else { return };
                    let cost = here
                        .modules
                        .get(module_index as usize)
                        .copied()
                        .unwrap_or(worst_module);
                    here.creates = here.creates.add(cost);
                }
            }
        }
        Payload::ComponentInstanceSection(reader) => {
            for instance in reader.clone().into_iter().flatten() {
                if let ComponentInstance::Instantiate {
                    component_index, ..
                } = instance
                {
                    let Some(here) = scope(stack, 0) else { return };
                    let cost = here
                        .components
                        .get(component_index as usize)
                        .copied()
                        .unwrap_or(worst_component);
                    here.creates = here.creates.add(cost);
                }
            }
        }
        Payload::ComponentAliasSection(reader) => {
            for alias in reader.clone().into_iter().flatten() {
                alias_into(stack, &alias, worst_module, worst_component);
            }
        }
        Payload::ComponentImportSection(reader) => {
            for import in reader.clone().into_iter().flatten() {
                let Some(here) = scope(stack, 0) else { return };
                match import.ty {
                    wasmparser::ComponentTypeRef::Module(_) => here.modules.push(worst_module),
                    wasmparser::ComponentTypeRef::Component(_) => {
                        here.components.push(worst_component)
                    }
                    _ => {}
                }
            }
        }
        Payload::ComponentExportSection(reader) => {
            for export in reader.clone().into_iter().flatten() {
                let Some(here) = scope(stack, 0) else { return };
                let index = export.index as usize;
                match export.kind {
                    ComponentExternalKind::Module => {
                        let cost = here.modules.get(index).copied().unwrap_or(worst_module);
                        here.modules.push(cost);
                    }
                    ComponentExternalKind::Component => {
                        let cost = here
                            .components
                            .get(index)
                            .copied()
                            .unwrap_or(worst_component);
                        here.components.push(cost);
                    }
                    _ => {}
                }
            }
        }
        _ => {}
    }
}

/// The component scope `outward` levels out from the innermost (0: it).
fn scope(stack: &mut [Frame], outward: u32) -> Option<&mut ComponentScope> {
    let index = stack.len().checked_sub(1 + outward as usize)?;
    match &mut stack[index] {
        Frame::Component(scope) => Some(scope),
        Frame::Module(_) => None,
    }
}

/// Adds what `alias` brings into the current scope's module or component
/// index space.
fn alias_into(
    stack: &mut [Frame],
    alias: &ComponentAlias<'_>,
    worst_module: InstanceState,
    worst_component: InstanceState,
) {
    let (is_module, cost) = match *alias {
        ComponentAlias::Outer { kind, count, index } => {
            let Some(outer) = scope(stack, count) else {
                return;
            };
            match kind {
                ComponentOuterAliasKind::CoreModule => (
                    true,
                    outer
                        .modules
                        .get(index as usize)
                        .copied()
                        .unwrap_or(worst_module),
                ),
                ComponentOuterAliasKind::Component => (
                    false,
                    outer
                        .components
                        .get(index as usize)
                        .copied()
                        .unwrap_or(worst_component),
                ),
                _ => return,
            }
        }
        ComponentAlias::InstanceExport { kind, .. } => match kind {
            ComponentExternalKind::Module => (true, worst_module),
            ComponentExternalKind::Component => (false, worst_component),
            _ => return,
        },
        ComponentAlias::CoreInstanceExport { .. } => return,
    };
    let Some(here) = scope(stack, 0) else { return };
    if is_module {
        here.modules.push(cost);
    } else {
        here.components.push(cost);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn component(core_instances: usize, globals: usize) -> Vec<u8> {
        let globals: String = (0..globals).map(|_| "(global i32 (i32.const 0))").collect();
        let instances: String = (0..core_instances)
            .map(|_| "(core instance (instantiate $m))")
            .collect();
        wat::parse_str(format!(
            "(component (core module $m {globals}) {instances} \
             (component $c (core module $n (global i32 (i32.const 0))) (core instance (instantiate $n))) \
             (instance (instantiate $c)) (instance (instantiate $c)))"
        ))
        .unwrap()
    }

    #[test]
    fn instances_and_their_globals_are_counted() {
        let state = instance_state(&component(3, 1000));
        // 3 instances of $m, and 2 instantiations of $c creating one of $n each.
        assert_eq!(state.core_instances, 5);
        let m = INSTANCE_BYTES + 1000 * GLOBAL_BYTES;
        let n = INSTANCE_BYTES + GLOBAL_BYTES;
        assert_eq!(state.bytes, 3 * m + 2 * n);
        assert_eq!(instance_state(b"not wasm"), InstanceState::default());
    }
}

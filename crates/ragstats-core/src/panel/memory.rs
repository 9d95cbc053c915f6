//! Tables held in memory under a name, so that every loader that takes a path also takes a
//! data frame: the Python bindings register the frames of one call under names such as
//! `<pandas.DataFrame>` for the duration of that call, on the thread that runs it, and
//! [`super::load_panel`] reads a registered name from memory instead of from disk.
//!
//! Registrations are per thread: concurrent calls from several Python threads each see only
//! their own tables, and a name never outlives the call that registered it.

use std::cell::RefCell;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;

/// One table: its schema and record batches (their buffers shared, not copied).
#[derive(Clone)]
pub struct MemoryTable {
    pub schema: SchemaRef,
    pub batches: Vec<RecordBatch>,
}

thread_local! {
    static TABLES: RefCell<HashMap<PathBuf, MemoryTable>> = RefCell::new(HashMap::new());
}

/// Runs `f` with `tables` readable by name on this thread, and removes them afterwards
/// (also when `f` panics).
pub fn with_tables<R>(tables: Vec<(String, MemoryTable)>, f: impl FnOnce() -> R) -> R {
    struct Unregister(Vec<PathBuf>);
    impl Drop for Unregister {
        fn drop(&mut self) {
            TABLES.with(|t| {
                let mut t = t.borrow_mut();
                for name in &self.0 {
                    t.remove(name);
                }
            });
        }
    }
    let names = TABLES.with(|t| {
        let mut t = t.borrow_mut();
        tables
            .into_iter()
            .map(|(name, table)| {
                let name = PathBuf::from(name);
                t.insert(name.clone(), table);
                name
            })
            .collect()
    });
    let _unregister = Unregister(names);
    f()
}

/// The table registered on this thread as `path`, if any.
pub fn lookup(path: &Path) -> Option<MemoryTable> {
    TABLES.with(|t| t.borrow().get(path).cloned())
}

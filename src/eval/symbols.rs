//! The symbol table: symbol text ↔ the raw cell a `symbol` column stores.
//!
//! A table is plain (it owns every symbol) or a layer over a shared, frozen table (a
//! per-request overlay): the base's symbols keep their cells, and symbols new to the
//! layer get cells after the base's, so cells mean the same in both and the base is
//! never copied or written.

use std::sync::Arc;

use lasso::{Key, Rodeo, Spur};

/// Symbol text ↔ cell.
#[derive(Clone, Debug, Default)]
pub(crate) struct Symbols {
    /// The shared base, and its number of symbols (the first cell of `own`).
    base: Option<Arc<Rodeo>>,
    offset: u64,
    own: Rodeo,
}

impl Symbols {
    /// An empty table.
    pub fn new() -> Symbols {
        Symbols::default()
    }

    /// Move this table's own symbols into a shared base (no change to any cell), so
    /// that layers made by cloning it share them instead of copying. A table that is
    /// already a layer (a base extended by [`FactBase::extend`](super::FactBase::extend))
    /// gets a new base holding the old base's symbols and its own, in cell order.
    pub fn share(&mut self) {
        match &self.base {
            None => {
                let own = std::mem::take(&mut self.own);
                self.offset = own.len() as u64;
                self.base = Some(Arc::new(own));
            }
            Some(_) if self.own.is_empty() => {}
            Some(base) => {
                let mut all: Rodeo = (**base).clone();
                for s in self.own.strings() {
                    all.get_or_intern(s);
                }
                self.offset = all.len() as u64;
                self.base = Some(Arc::new(all));
                self.own = Rodeo::new();
            }
        }
    }

    /// A layer over this table: shares the base (moving this table's own symbols into
    /// a shared base first, if it has no base yet). Over a layer, the new layer shares
    /// the same base and copies the layer's own symbols.
    #[cfg(test)]
    pub fn layer(&mut self) -> Symbols {
        self.share();
        self.clone()
    }

    /// The cell of a symbol, interning it if new.
    pub fn get_or_intern(&mut self, s: &str) -> u64 {
        if let Some(c) = self.get(s) {
            return c;
        }
        self.offset + self.own.get_or_intern(s).into_usize() as u64
    }

    /// The cell of a known symbol.
    #[inline]
    pub fn get(&self, s: &str) -> Option<u64> {
        if let Some(b) = &self.base
            && let Some(k) = b.get(s)
        {
            return Some(k.into_usize() as u64);
        }
        self.own.get(s).map(|k| self.offset + k.into_usize() as u64)
    }

    /// The text of a cell ("" for a cell no symbol has).
    #[inline]
    pub fn resolve(&self, cell: u64) -> &str {
        let (table, i) = match &self.base {
            Some(b) if cell < self.offset => (&**b, cell),
            _ if cell >= self.offset => (&self.own, cell - self.offset),
            _ => return "",
        };
        usize::try_from(i)
            .ok()
            .and_then(Spur::try_from_usize)
            .and_then(|k| table.try_resolve(&k))
            .unwrap_or("")
    }

    /// Bytes of its own symbols' text, roughly.
    pub fn own_bytes(&self) -> usize {
        self.own.strings().map(|s| s.len() + 16).sum()
    }

    /// Every symbol, base first.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.offset as usize + self.own.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sharing_a_layer_folds_its_symbols_into_a_new_base_without_moving_cells() {
        let mut base = Symbols::new();
        let a = base.get_or_intern("a");
        let mut layer = base.layer();
        let b = layer.get_or_intern("b");
        layer.share();
        assert_eq!(layer.own_bytes(), 0);
        assert_eq!((layer.get("a"), layer.get("b")), (Some(a), Some(b)));
        assert_eq!((layer.resolve(a), layer.resolve(b)), ("a", "b"));
        let mut next = layer.clone();
        assert_eq!(next.get_or_intern("c"), 2);
    }

    #[test]
    fn a_layer_keeps_base_cells_and_numbers_new_symbols_after_them() {
        let mut base = Symbols::new();
        let a = base.get_or_intern("a");
        let b = base.get_or_intern("b");
        let mut layer = base.layer();
        assert_eq!(layer.get("a"), Some(a));
        assert_eq!(layer.get_or_intern("b"), b);
        let c = layer.get_or_intern("c");
        assert_eq!(c, 2);
        assert_eq!(layer.resolve(c), "c");
        assert_eq!(layer.resolve(a), "a");
        assert_eq!(base.get("c"), None, "the base is not written");
        assert_eq!(base.resolve(1), "b");
        assert_eq!(base.resolve(7), "");
        let mut again = base.layer();
        assert_eq!(again.get_or_intern("d"), 2, "layers are independent");
        assert_eq!(layer.len(), 3);
    }
}

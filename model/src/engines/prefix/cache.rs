//! Prefix reuse: a trie of fixed-size token blocks, each node holding the keys and values of
//! its block's positions. A prompt reuses the longest chain of cached full blocks from its
//! start and then, token by token, the longest common start of one child block (consecutive
//! Serial steps of an item diverge inside a block, where the state's prefix field changes); the
//! rest is computed and its full blocks are added. Least recently used leaves are evicted past a
//! byte budget.
//!
//! Reuse never changes a result beyond floating-point rounding: the cached keys and values are
//! those the same tokens at the same positions produce (a position's keys and values depend
//! only on the tokens up to it).

use std::collections::HashMap;

use super::transformer::{LayerKv, Transformer};
use crate::error::EngineError;

/// Tokens per cached block.
pub const BLOCK: usize = 8;

struct Node {
    parent: usize,
    tokens: Vec<u32>,
    kv: Vec<LayerKv>,
    last_used: u64,
    bytes: usize,
}

/// The trie. Node 0 is the root (empty prefix).
pub struct PrefixCache {
    nodes: HashMap<usize, Node>,
    index: HashMap<(usize, Vec<u32>), usize>,
    /// Child blocks of each node (0: the root): leaves are what eviction may drop, and a match
    /// may end inside one of them.
    kids: HashMap<usize, Vec<usize>>,
    next_id: usize,
    clock: u64,
    bytes: usize,
    budget: usize,
    bytes_per_token: usize,
    kv_width: usize,
}

/// A lookup result: the matched chain of full blocks (root excluded), an optional leading part
/// of one more block (node, tokens), and the number of tokens they cover.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PrefixMatch {
    /// Ids of the matched full blocks in prompt order, each the child of the one before
    /// (empty: no whole block is reused).
    pub nodes: Vec<usize>,
    /// `(node, count)`: the first `count` tokens (fewer than a block) of the child block `node`
    /// match the tokens after the full blocks; `None`: nothing past the full blocks is reused.
    pub partial: Option<(usize, usize)>,
    /// Prompt positions reused, `0..tokens`: the full blocks' tokens plus the partial count.
    pub tokens: usize,
}

impl PrefixMatch {
    /// Nothing reused.
    pub fn none() -> PrefixMatch {
        PrefixMatch::default()
    }

    /// Tokens covered by whole blocks (where new blocks are inserted from).
    pub fn full_tokens(&self) -> usize {
        self.nodes.len() * BLOCK
    }
}

impl PrefixCache {
    /// `budget_bytes` bounds the cached keys and values; `bytes_per_token` is the size of one
    /// position over all layers (K and V), `kv_width` the floats of K (or V) per position and
    /// layer.
    pub fn new(budget_bytes: usize, bytes_per_token: usize, kv_width: usize) -> PrefixCache {
        PrefixCache {
            nodes: HashMap::new(),
            index: HashMap::new(),
            kids: HashMap::new(),
            next_id: 1,
            clock: 0,
            bytes: 0,
            budget: budget_bytes,
            bytes_per_token,
            kv_width,
        }
    }

    /// Bytes of keys and values held now (`BLOCK · bytes_per_token` a block); each insert
    /// evicts until it is within the budget.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// Cached blocks (trie nodes, the root not counted).
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Whether no block is cached.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// Drop every cached block; the budget and per-position sizes stay, so the cache fills
    /// again from the next insert.
    pub fn clear(&mut self) {
        self.nodes.clear();
        self.index.clear();
        self.kids.clear();
        self.bytes = 0;
    }

    /// The longest cached prefix of `tokens` (full blocks, then part of one block) that leaves
    /// at least `keep` tokens uncached (a scored prompt needs its last position computed).
    pub fn lookup(&mut self, tokens: &[u32], keep: usize) -> PrefixMatch {
        self.clock += 1;
        let limit = tokens.len().saturating_sub(keep);
        let mut parent = 0;
        let mut nodes = Vec::new();
        let mut covered = 0;
        while covered + BLOCK <= limit {
            let key = (parent, tokens[covered..covered + BLOCK].to_vec());
            match self.index.get(&key) {
                Some(&id) => {
                    if let Some(n) = self.nodes.get_mut(&id) {
                        n.last_used = self.clock;
                    }
                    nodes.push(id);
                    parent = id;
                    covered += BLOCK;
                }
                None => break,
            }
        }
        // The child block sharing the longest start with the next tokens.
        let room = (limit - covered).min(BLOCK);
        let next = &tokens[covered..covered + room];
        let mut partial: Option<(usize, usize)> = None;
        for &kid in self.kids.get(&parent).map(Vec::as_slice).unwrap_or(&[]) {
            let Some(n) = self.nodes.get(&kid) else {
                continue;
            };
            let common = n
                .tokens
                .iter()
                .zip(next)
                .take_while(|(a, b)| a == b)
                .count();
            if common > 0 && partial.is_none_or(|(_, best)| common > best) {
                partial = Some((kid, common));
            }
        }
        if let Some((kid, _)) = partial {
            if let Some(n) = self.nodes.get_mut(&kid) {
                n.last_used = self.clock;
            }
        }
        PrefixMatch {
            tokens: covered + partial.map_or(0, |(_, c)| c),
            nodes,
            partial,
        }
    }

    /// Keys and values of a match, concatenated per layer.
    pub fn assemble(&self, m: &PrefixMatch) -> Result<Vec<LayerKv>, EngineError> {
        let vanished = || EngineError::Compute("prefix cache node vanished".into());
        let mut blocks: Vec<&[LayerKv]> = m
            .nodes
            .iter()
            .filter_map(|id| self.nodes.get(id).map(|n| n.kv.as_slice()))
            .collect();
        if blocks.len() != m.nodes.len() {
            return Err(vanished());
        }
        let head;
        if let Some((id, count)) = m.partial {
            let node = self.nodes.get(&id).ok_or_else(vanished)?;
            head = Transformer::slice_kv(&node.kv, 0, count, self.kv_width)?;
            blocks.push(&head);
        }
        Transformer::concat_kv(&blocks)
    }

    /// Add the full blocks of `tokens` beyond the matched chain, taking their keys and values
    /// from `kv` (positions 0..tokens.len() of the sequence).
    pub fn insert(
        &mut self,
        tokens: &[u32],
        m: &PrefixMatch,
        kv: &[LayerKv],
    ) -> Result<(), EngineError> {
        self.clock += 1;
        let mut parent = m.nodes.last().copied().unwrap_or(0);
        let mut start = m.full_tokens();
        while start + BLOCK <= tokens.len() {
            let key = (parent, tokens[start..start + BLOCK].to_vec());
            let id = match self.index.get(&key) {
                Some(&id) => id,
                None => {
                    let id = self.next_id;
                    self.next_id += 1;
                    let block_kv = Transformer::slice_kv(kv, start, BLOCK, self.kv_width)?;
                    let bytes = BLOCK * self.bytes_per_token;
                    self.nodes.insert(
                        id,
                        Node {
                            parent,
                            tokens: key.1.clone(),
                            kv: block_kv,
                            last_used: self.clock,
                            bytes,
                        },
                    );
                    self.kids.entry(parent).or_default().push(id);
                    self.index.insert(key, id);
                    self.bytes += bytes;
                    id
                }
            };
            if let Some(n) = self.nodes.get_mut(&id) {
                n.last_used = self.clock;
            }
            parent = id;
            start += BLOCK;
        }
        self.evict();
        Ok(())
    }

    /// Drop least recently used leaves until the cache fits its budget.
    fn evict(&mut self) {
        while self.bytes > self.budget {
            let victim = self
                .nodes
                .iter()
                .filter(|(id, _)| self.kids.get(id).is_none_or(Vec::is_empty))
                .min_by_key(|(id, n)| (n.last_used, **id))
                .map(|(id, _)| *id);
            let Some(id) = victim else { break };
            if let Some(n) = self.nodes.remove(&id) {
                self.index.remove(&(n.parent, n.tokens));
                self.bytes -= n.bytes;
                if let Some(list) = self.kids.get_mut(&n.parent) {
                    list.retain(|&k| k != id);
                }
                self.kids.remove(&id);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const WIDTH: usize = 2;

    /// Fake keys/values of `len` positions: position p holds the value p in every float, so a
    /// slice shows which positions it came from.
    fn kv(len: usize) -> Vec<LayerKv> {
        let k: Vec<f32> = (0..len)
            .flat_map(|p| std::iter::repeat_n(p as f32, WIDTH))
            .collect();
        vec![LayerKv { k: k.clone(), v: k }]
    }

    fn cache() -> PrefixCache {
        PrefixCache::new(1 << 20, 2 * WIDTH * 4, WIDTH)
    }

    #[test]
    fn full_blocks_then_part_of_a_block_are_reused() {
        let mut c = cache();
        let a: Vec<u32> = (0..20).collect();
        let m = c.lookup(&a, 1);
        assert_eq!(m, PrefixMatch::none());
        c.insert(&a, &m, &kv(20)).unwrap();
        assert_eq!(c.len(), 2, "two full blocks of 8 are cached");
        // Shares 13 tokens: one full block and 5 tokens of the second.
        let mut b = a.clone();
        b[13] = 99;
        let m = c.lookup(&b, 1);
        assert_eq!(m.nodes.len(), 1);
        assert_eq!(m.partial.map(|p| p.1), Some(5));
        assert_eq!(m.tokens, 13);
        let got = c.assemble(&m).unwrap();
        let want: Vec<f32> = (0..13)
            .flat_map(|p| std::iter::repeat_n(p as f32, WIDTH))
            .collect();
        assert_eq!(got[0].k, want);
        // Inserting b adds its own second block beside a's.
        c.insert(&b, &m, &kv(20)).unwrap();
        assert_eq!(c.len(), 3);
        assert_eq!(c.lookup(&b, 1).tokens, 16);
    }

    #[test]
    fn a_match_leaves_the_kept_tokens_uncached() {
        let mut c = cache();
        let a: Vec<u32> = (0..16).collect();
        let m = c.lookup(&a, 1);
        c.insert(&a, &m, &kv(16)).unwrap();
        // The same prompt again: everything but its last token is reused.
        let m = c.lookup(&a, 1);
        assert_eq!(m.tokens, 15);
        assert_eq!(m.nodes.len(), 1);
        assert_eq!(m.partial.map(|p| p.1), Some(7));
        // A prompt that is a strict prefix of a cached one.
        let m = c.lookup(&a[..5], 1);
        assert_eq!(m.tokens, 4);
    }

    #[test]
    fn eviction_drops_leaves_and_their_partial_matches() {
        // Room for exactly two blocks.
        let mut c = PrefixCache::new(2 * BLOCK * 2 * WIDTH * 4, 2 * WIDTH * 4, WIDTH);
        let a: Vec<u32> = (0..16).collect();
        let m = c.lookup(&a, 1);
        c.insert(&a, &m, &kv(16)).unwrap();
        let b: Vec<u32> = (100..116).collect();
        let m = c.lookup(&b, 1);
        c.insert(&b, &m, &kv(16)).unwrap();
        assert!(c.bytes() <= 2 * BLOCK * 2 * WIDTH * 4);
        assert_eq!(c.len(), 2);
        // a's blocks were least recently used: gone, including as a partial match.
        assert_eq!(c.lookup(&a, 1).tokens, 0);
        assert_eq!(c.lookup(&b, 1).tokens, 15);
    }
}

//! Prefix reuse: a trie of fixed-size token blocks, each node holding the keys and values of
//! its block's positions. A prompt reuses the longest chain of cached full blocks from its
//! start; the rest is computed and its full blocks are added. Least recently used leaves are
//! evicted past a byte budget.
//!
//! Reuse never changes a result beyond floating-point rounding: the cached keys and values are
//! those the same tokens at the same positions produce (a position's keys and values depend
//! only on the tokens up to it).

use std::collections::HashMap;

use super::error::EngineError;
use super::llama::{LayerKv, LlamaModel};

/// Tokens per cached block.
pub const BLOCK: usize = 8;

struct Node {
    parent: usize,
    tokens: Vec<u32>,
    kv: Vec<LayerKv>,
    children: usize,
    last_used: u64,
    bytes: usize,
}

/// The trie. Node 0 is the root (empty prefix).
pub struct PrefixCache {
    nodes: HashMap<usize, Node>,
    index: HashMap<(usize, Vec<u32>), usize>,
    next_id: usize,
    clock: u64,
    bytes: usize,
    budget: usize,
    bytes_per_token: usize,
}

/// A lookup result: the matched node chain (root excluded) and the number of tokens it covers.
pub struct PrefixMatch {
    pub nodes: Vec<usize>,
    pub tokens: usize,
}

impl PrefixCache {
    /// `budget_bytes` bounds the cached keys and values; `bytes_per_token` is the size of one
    /// position over all layers (K and V).
    pub fn new(budget_bytes: usize, bytes_per_token: usize) -> PrefixCache {
        PrefixCache {
            nodes: HashMap::new(),
            index: HashMap::new(),
            next_id: 1,
            clock: 0,
            bytes: 0,
            budget: budget_bytes,
            bytes_per_token,
        }
    }

    pub fn bytes(&self) -> usize {
        self.bytes
    }

    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    pub fn clear(&mut self) {
        self.nodes.clear();
        self.index.clear();
        self.bytes = 0;
    }

    /// The longest cached chain of full blocks that is a prefix of `tokens` and leaves at least
    /// `keep` tokens uncached (a scored prompt needs its last position computed).
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
        PrefixMatch {
            nodes,
            tokens: covered,
        }
    }

    /// Keys and values of a matched chain, concatenated per layer.
    pub fn assemble(&self, m: &PrefixMatch) -> Result<Vec<LayerKv>, EngineError> {
        let blocks: Vec<&[LayerKv]> = m
            .nodes
            .iter()
            .filter_map(|id| self.nodes.get(id).map(|n| n.kv.as_slice()))
            .collect();
        if blocks.len() != m.nodes.len() {
            return Err(EngineError::Compute("prefix cache node vanished".into()));
        }
        LlamaModel::concat_kv(&blocks)
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
        let mut start = m.tokens;
        while start + BLOCK <= tokens.len() {
            let key = (parent, tokens[start..start + BLOCK].to_vec());
            let id = match self.index.get(&key) {
                Some(&id) => id,
                None => {
                    let id = self.next_id;
                    self.next_id += 1;
                    let block_kv = LlamaModel::slice_kv(kv, start, BLOCK)?;
                    let bytes = BLOCK * self.bytes_per_token;
                    self.nodes.insert(
                        id,
                        Node {
                            parent,
                            tokens: key.1.clone(),
                            kv: block_kv,
                            children: 0,
                            last_used: self.clock,
                            bytes,
                        },
                    );
                    if let Some(p) = self.nodes.get_mut(&parent) {
                        p.children += 1;
                    }
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
                .filter(|(_, n)| n.children == 0)
                .min_by_key(|(id, n)| (n.last_used, **id))
                .map(|(id, _)| *id);
            let Some(id) = victim else { break };
            if let Some(n) = self.nodes.remove(&id) {
                self.index.remove(&(n.parent, n.tokens));
                self.bytes -= n.bytes;
                if let Some(p) = self.nodes.get_mut(&n.parent) {
                    p.children -= 1;
                }
            }
        }
    }
}

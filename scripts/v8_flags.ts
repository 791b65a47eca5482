/**
 * V8 flags the shipped kubelet runs with (baked in by `deno task compile`, also used by
 * `deno task start` and by kubelet.ts in the differential runs and the peer bench).
 *
 * - `--max-semi-space-size=1` caps each young-generation semi-space at 1 MiB (V8 lets them
 *   grow to 16 MiB). The kubelet allocates in small, short-lived bursts (sync loop, relists,
 *   CRI messages), so the large nursery only holds garbage between scavenges. Measured with
 *   bench/peer_bench.ts at 110 pods on containerd: RSS 196 → 136 MiB, CPU (0.042 vs 0.044
 *   cores) and pod start p50 (223 vs 226 ms) unchanged.
 * - `--heap-growing-percent=10` and `--optimize-for-size` start a full GC after a small
 *   growth of the old generation. Most of the RSS at 110 pods was not the JS heap (about
 *   20 MiB live) but glibc's main arena: every `fetch` (CRI call) leaves native memory that
 *   is only freed once a full GC collects its JS objects, and the decoded relist responses
 *   (about 150 KiB each at 110 pods) are promoted to the old generation. With V8's default
 *   growth the heap went from 20 to 70 MiB between full GCs, the garbage held about 90 MiB of
 *   malloc memory, and the arena kept those pages (66 MiB system, 13 MiB in use after the GC).
 *   Peer bench at 110 pods: RSS 132 → 102–106 MiB (upstream 124–126), CPU 0.050 → 0.076–0.084
 *   cores (upstream 0.24–0.28), pod start p50 unchanged (docs/peers.md).
 */
export const KUBELET_V8_FLAGS =
  "--max-semi-space-size=1,--heap-growing-percent=10,--optimize-for-size";

/**
 * V8 flags the shipped kubelet runs with (baked in by `deno task compile`, also used by
 * `deno task start` and by kubelet.ts in the differential runs and the peer bench).
 *
 * `--max-semi-space-size=1` caps each young-generation semi-space at 1 MiB (V8 lets them grow
 * to 16 MiB). The kubelet allocates in small, short-lived bursts (sync loop, relists, CRI
 * messages), so the large nursery only holds garbage between scavenges. Measured with
 * bench/peer_bench.ts at 110 pods on containerd: RSS 196 → 136 MiB, CPU (0.042 vs 0.044
 * cores) and pod start p50 (223 vs 226 ms) unchanged.
 */
export const KUBELET_V8_FLAGS = "--max-semi-space-size=1";

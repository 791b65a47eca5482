/** Helpers shared by the CRI tests. */

/**
 * Polls `probe` until it returns a value other than `undefined`, or fails
 * after `timeoutMs` (a bound for slow machines, not a speed assertion).
 */
export async function waitFor<T>(
  probe: () => Promise<T | undefined>,
  options: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<T> {
  const deadline = Date.now() + (options.timeoutMs ?? 20_000);
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) {
      throw new Error(
        `Condition not met within ${options.timeoutMs ?? 20_000} ms`,
      );
    }
    await new Promise((resolve) =>
      setTimeout(resolve, options.intervalMs ?? 50)
    );
  }
}

/** Values `scripts/cri_env.sh up` prints (see `criEnv`). */
export interface CriEnv {
  endpoint: string;
  root: string;
  image: string;
  registryImage: string;
  authRegistryImage: string;
  authUser: string;
  authPassword: string;
}

/** The real-containerd environment from `scripts/cri_env.sh up`, if set. */
export function criEnv(): CriEnv {
  const endpoint = Deno.env.get("KUBELET_TS_CRI_ENDPOINT") ?? "";
  const root = Deno.env.get("KUBELET_TS_CRI_ROOT") ?? "/tmp/kts-cri";
  return {
    endpoint,
    root,
    image: Deno.env.get("KUBELET_TS_CRI_IMAGE") ?? "kts.local/busybox:latest",
    registryImage: Deno.env.get("KUBELET_TS_CRI_REGISTRY_IMAGE") ??
      "127.0.0.1:5000/kts/busybox:latest",
    authRegistryImage: Deno.env.get("KUBELET_TS_CRI_AUTH_REGISTRY_IMAGE") ??
      "127.0.0.1:5001/kts/private:latest",
    authUser: Deno.env.get("KUBELET_TS_CRI_AUTH_USER") ?? "kts",
    authPassword: Deno.env.get("KUBELET_TS_CRI_AUTH_PASSWORD") ?? "kts-secret",
  };
}

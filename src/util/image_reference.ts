/**
 * Image reference normalization as containerd and docker do it (`busybox` →
 * `docker.io/library/busybox:latest`), and the repository part the kubelet's credential
 * keyring matches (upstream `parsers.ParseImageName`).
 * @module
 */

/**
 * Normalizes an image reference like containerd/docker: adds the `docker.io`
 * domain, the `library/` path for official images and the `latest` tag.
 */
export function normalizeImageRef(ref: string): string {
  let name = ref.trim();
  let digest = "";
  const at = name.indexOf("@");
  if (at >= 0) {
    digest = name.slice(at);
    name = name.slice(0, at);
  }
  const slash = name.indexOf("/");
  const first = slash < 0 ? "" : name.slice(0, slash);
  const hasDomain = first !== "" &&
    (first.includes(".") || first.includes(":") || first === "localhost");
  if (!hasDomain) {
    name = slash < 0 ? `docker.io/library/${name}` : `docker.io/${name}`;
  }
  if (digest) return name + digest;
  const lastPart = name.slice(name.lastIndexOf("/") + 1);
  return lastPart.includes(":") ? name : `${name}:latest`;
}

/** The normalized repository without tag or digest (`docker.io/library/busybox`). */
export function imageRepository(ref: string): string {
  const normalized = normalizeImageRef(ref);
  const at = normalized.indexOf("@");
  if (at >= 0) return normalized.slice(0, at);
  const colon = normalized.lastIndexOf(":");
  return colon > normalized.lastIndexOf("/")
    ? normalized.slice(0, colon)
    : normalized;
}

/**
 * Slash-separated path helpers with the rules of Go's `path/filepath` on
 * Unix (`Clean`, `Join`, `Dir`, `IsAbs`, `Abs`), so paths from the config
 * resolve as the upstream kubelet resolves them: `manifests/` joined to
 * `/etc/kubernetes` is `/etc/kubernetes/manifests`, with no trailing slash.
 * (`node:path` follows other rules and costs start-up time.)
 * @module
 */

/**
 * Go `filepath.Clean`: the shortest equivalent path. Repeated slashes
 * become one, `.` elements go, each `..` removes the element before it (at
 * the root it is dropped), and no trailing slash is left except for `/`.
 * The empty path is `.`.
 */
export function clean(path: string): string {
  const rooted = path.startsWith("/");
  const out: string[] = [];
  for (const part of path.split("/")) {
    if (part === "" || part === ".") continue;
    if (part === "..") {
      if (out.length > 0 && out[out.length - 1] !== "..") out.pop();
      else if (!rooted) out.push("..");
      continue;
    }
    out.push(part);
  }
  const body = out.join("/");
  if (rooted) return `/${body}`;
  return body === "" ? "." : body;
}

/** Go `filepath.IsAbs` on Unix: whether the path starts at the root. */
export function isAbs(path: string): boolean {
  return path.startsWith("/");
}

/**
 * Go `filepath.Join`: the non-empty parts joined with `/` and cleaned; the
 * empty string when every part is empty.
 */
export function join(...parts: string[]): string {
  const joined = parts.filter((p) => p !== "").join("/");
  return joined === "" ? "" : clean(joined);
}

/**
 * Go `filepath.Dir`: everything before the last slash, cleaned (`a/b/`
 * gives `a/b`, `a` gives `.`).
 */
export function dir(path: string): string {
  return clean(path.slice(0, path.lastIndexOf("/") + 1));
}

/**
 * Go `filepath.Abs`: the cleaned path when it is absolute, else joined to
 * the working directory (`cwd`, default `Deno.cwd()`).
 */
export function abs(path: string, cwd?: string): string {
  return isAbs(path) ? clean(path) : join(cwd ?? Deno.cwd(), path);
}

/**
 * POSIX path helpers with the semantics of Node's `path.posix` (`dirname`,
 * `isAbsolute`, `join`, `normalize`, `resolve`). Importing `node:path`
 * initialises much of Deno's Node compatibility layer (process, errors,
 * the win32 variant), which costs start-up time these few functions do not
 * need. `posix_path_test.ts` compares both on generated paths.
 * @module
 */

/** Normalizes a path: `.` and `..` segments, repeated and trailing `/`. */
export function normalize(path: string): string {
  if (path === "") return ".";
  const absolute = path.startsWith("/");
  const trailing = path.endsWith("/");
  const out: string[] = [];
  for (const part of path.split("/")) {
    if (part === "" || part === ".") continue;
    if (part === "..") {
      if (out.length > 0 && out[out.length - 1] !== "..") out.pop();
      else if (!absolute) out.push("..");
      continue;
    }
    out.push(part);
  }
  let text = out.join("/");
  if (text === "" && !absolute) text = ".";
  if (trailing && text !== "" && text !== ".") text += "/";
  else if (trailing && text === ".") text = "./";
  return absolute ? `/${text}` : text;
}

/** Whether a path starts at the root. */
export function isAbsolute(path: string): boolean {
  return path.startsWith("/");
}

/** Joins the non-empty parts with `/` and normalizes. */
export function join(...parts: string[]): string {
  const joined = parts.filter((p) => p !== "").join("/");
  return joined === "" ? "." : normalize(joined);
}

/** The path without its last segment (trailing slashes ignored). */
export function dirname(path: string): string {
  if (path === "") return ".";
  const rooted = path.startsWith("/");
  let end = -1;
  let inName = false;
  for (let i = path.length - 1; i >= 1; i--) {
    if (path[i] === "/") {
      if (inName) {
        end = i;
        break;
      }
    } else inName = true;
  }
  if (end === -1) return rooted ? "/" : ".";
  if (rooted && end === 1) return "//";
  return path.slice(0, end);
}

/** Resolves the parts right to left into an absolute path (cwd last). */
export function resolve(...parts: string[]): string {
  let path = "";
  for (let i = parts.length - 1; i >= -1 && !path.startsWith("/"); i--) {
    const part = i >= 0 ? parts[i] as string : Deno.cwd();
    if (part === "") continue;
    path = path === "" ? part : `${part}/${path}`;
  }
  const out = normalize(path);
  return out.length > 1 && out.endsWith("/") ? out.slice(0, -1) : out;
}

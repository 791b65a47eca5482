/**
 * Version constants: the upstream Kubernetes release we are compatible with,
 * and our own release carried in the semver build metadata.
 * @module
 */

/** The upstream kubelet release whose flags, config and CRI we implement. */
export const KUBERNETES_VERSION = "v1.34.0";
/** kubelet.ts's own release. */
export const KUBELET_TS_VERSION = "0.1.0";
/** The reported version: `v1.34.0+kubelet.ts.0.1.0`. */
export const GIT_VERSION =
  `${KUBERNETES_VERSION}+kubelet.ts.${KUBELET_TS_VERSION}`;
/** Source commit, when the build stamps one. */
export const GIT_COMMIT = "";
/** `clean`/`dirty` when the build stamps it. */
export const GIT_TREE_STATE = "";
/** Build time (RFC 3339), upstream's placeholder when not stamped. */
export const BUILD_DATE = "1970-01-01T00:00:00Z";

const GO_ARCH: Record<string, string> = {
  "x86_64": "amd64",
  "aarch64": "arm64",
};

/** The fields of component-base's `version.Info`. */
export interface VersionInfo {
  major: string;
  minor: string;
  gitVersion: string;
  gitCommit: string;
  gitTreeState: string;
  buildDate: string;
  goVersion: string;
  compiler: string;
  platform: string;
}

/** The version info for a reported version (default {@linkcode GIT_VERSION}). */
export function versionInfo(gitVersion: string = GIT_VERSION): VersionInfo {
  const [major = "", minor = ""] = KUBERNETES_VERSION.slice(1).split(".");
  return {
    major,
    minor,
    gitVersion,
    gitCommit: GIT_COMMIT,
    gitTreeState: GIT_TREE_STATE,
    buildDate: BUILD_DATE,
    goVersion: `deno${Deno.version.deno}`,
    compiler: "deno",
    platform: `${Deno.build.os}/${GO_ARCH[Deno.build.arch] ?? Deno.build.arch}`,
  };
}

/** `--version=raw` output: the Go `%#v` rendering of version.Info (no newline). */
export function formatRawVersion(info: VersionInfo): string {
  const q = (s: string) => JSON.stringify(s);
  return `version.Info{Major:${q(info.major)}, Minor:${q(info.minor)}, ` +
    `EmulationMajor:"", EmulationMinor:"", MinCompatibilityMajor:"", MinCompatibilityMinor:"", ` +
    `GitVersion:${q(info.gitVersion)}, GitCommit:${q(info.gitCommit)}, ` +
    `GitTreeState:${q(info.gitTreeState)}, BuildDate:${q(info.buildDate)}, ` +
    `GoVersion:${q(info.goVersion)}, Compiler:${q(info.compiler)}, Platform:${
      q(info.platform)
    }}`;
}

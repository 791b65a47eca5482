/**
 * Static pod sources: the manifest file/directory source and the manifest URL source. Each
 * reports full snapshots of its pods; `PodConfig` turns them into incremental updates.
 *
 * @module
 */
export { createFileSource } from "./file_source.ts";
export type {
  FileSourceDeps,
  FileSourceOptions,
  PodSource,
} from "./file_source.ts";
export { createHttpSource } from "./http_source.ts";
export type { HttpSourceDeps, HttpSourceOptions } from "./http_source.ts";
export { createApiSource } from "./api_source.ts";
export type { ApiSourceDeps, ApiSourceOptions } from "./api_source.ts";

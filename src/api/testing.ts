/** Test doubles of the API area: the in-memory API server. */
export { applyMergePatch, FakeApiServer } from "./fake_api_server.ts";

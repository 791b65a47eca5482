import assert from "node:assert/strict";
import { FakeClock } from "../../clock/testing.ts";
import {
  alwaysAllow,
  createWebhookAuthorizer,
  type SubjectAccessReviewSpec,
  type SubjectAccessReviewStatus,
} from "./authorize.ts";
import { requestAttributes } from "./request_attributes.ts";

class FakeReviewer {
  readonly specs: SubjectAccessReviewSpec[] = [];
  answer: SubjectAccessReviewStatus | Error = { allowed: true };
  reviewAccess(spec: SubjectAccessReviewSpec) {
    this.specs.push(spec);
    return this.answer instanceof Error
      ? Promise.reject(this.answer)
      : Promise.resolve(this.answer);
  }
}

const USER = { name: "alice", groups: ["g", "system:authenticated"] };

Deno.test("createWebhookAuthorizer() sends the node attributes as a SubjectAccessReview", async () => {
  const reviewer = new FakeReviewer();
  const authz = createWebhookAuthorizer({ reviewer, clock: new FakeClock() });
  const decision = await authz.authorize(
    USER,
    requestAttributes({ method: "GET", path: "/stats/summary" }, "node-a"),
  );
  assert.equal(decision.allowed, true);
  assert.deepEqual(reviewer.specs, [{
    resourceAttributes: {
      namespace: "",
      verb: "get",
      group: "",
      version: "v1",
      resource: "nodes",
      subresource: "stats",
      name: "node-a",
    },
    user: "alice",
    groups: ["g", "system:authenticated"],
  }]);
});

Deno.test("createWebhookAuthorizer() caches allowed answers 5 min and denied ones 30 s", async () => {
  const clock = new FakeClock();
  const reviewer = new FakeReviewer();
  const authz = createWebhookAuthorizer({ reviewer, clock }, {
    allowedTtlMs: 300_000,
    deniedTtlMs: 30_000,
  });
  const pods = requestAttributes({ method: "GET", path: "/pods" }, "node-a");
  const exec = requestAttributes(
    { method: "GET", path: "/exec/ns/p/c" },
    "node-a",
  );
  await authz.authorize(USER, pods);
  reviewer.answer = { allowed: false, reason: "no RBAC" };
  assert.deepEqual(await authz.authorize(USER, exec), {
    allowed: false,
    reason: "no RBAC",
  });
  await authz.authorize(USER, pods);
  await authz.authorize(USER, exec);
  assert.equal(reviewer.specs.length, 2);
  await clock.advance(30_001);
  await authz.authorize(USER, pods);
  await authz.authorize(USER, exec);
  assert.equal(reviewer.specs.length, 3);
  await clock.advance(300_000);
  assert.equal((await authz.authorize(USER, pods)).allowed, false);
  assert.equal(reviewer.specs.length, 4);
  // Another user is another question.
  await authz.authorize({ name: "bob", groups: [] }, exec);
  assert.equal(reviewer.specs.length, 5);
});

Deno.test("createWebhookAuthorizer() fails closed", async () => {
  const reviewer = new FakeReviewer();
  const authz = createWebhookAuthorizer({ reviewer, clock: new FakeClock() });
  const pods = requestAttributes({ method: "GET", path: "/pods" }, "node-a");
  reviewer.answer = { allowed: true, denied: true };
  assert.equal((await authz.authorize(USER, pods)).allowed, false);
  reviewer.answer = new Error("connection refused");
  await assert.rejects(
    authz.authorize(
      USER,
      requestAttributes({ method: "POST", path: "/pods" }, "node-a"),
    ),
  );
  // A failed review is not remembered as an answer.
  reviewer.answer = { allowed: false };
  assert.equal(
    (await authz.authorize(
      USER,
      requestAttributes({ method: "POST", path: "/pods" }, "node-a"),
    ))
      .allowed,
    false,
  );
  // No verb (an unknown method) is never sent, never allowed.
  const count = reviewer.specs.length;
  assert.equal(
    (await authz.authorize(
      USER,
      requestAttributes({ method: "TRACE", path: "/pods" }, "node-a"),
    ))
      .allowed,
    false,
  );
  assert.equal(reviewer.specs.length, count);
  assert.equal((await alwaysAllow.authorize(USER, pods)).allowed, true);
});

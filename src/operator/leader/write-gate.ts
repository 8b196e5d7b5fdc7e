import { AgentCallError, type AgentClient } from "../../agent-client/agent-client";
import type { KubeClient } from "../../kube/client";

/** A write refused because this replica does not hold the Lease (it never reached the API server). */
export class NotLeaderError extends Error {
  constructor(verb: string, what: string, identity: string) {
    super(
      `${verb} ${what}: not sent: this replica (${identity}) does not hold the leader Lease, or did not renew it in time`,
    );
    this.name = "NotLeaderError";
  }
}

/**
 * `kube` whose writes (create, create of a subresource, patch, delete) are sent only while
 * `isLeader()` says this replica leads, checked right before each one; reads pass. Stopping the
 * reconciles when the Lease is lost takes a moment (a reconcile in progress finishes its step);
 * this gate makes sure none of them writes meanwhile. The Lease itself is written with the
 * ungated client.
 */
export function leaderOnlyWrites(kube: KubeClient, isLeader: () => boolean, identity: string): KubeClient {
  const gate = (verb: string, what: string) => {
    if (!isLeader()) throw new NotLeaderError(verb, what, identity);
  };
  return {
    get: (r, ns, name) => kube.get(r, ns, name),
    list: (r, ns) => kube.list(r, ns),
    watch: (r, ns, rv, onEvent, signal) => kube.watch(r, ns, rv, onEvent, signal),
    async create(r, ns, body) {
      gate("POST", `${r.kind} ${ns}/${body.metadata.name}`);
      return kube.create(r, ns, body);
    },
    async createSubresource(r, ns, name, subresource, body) {
      gate("POST", `${r.kind} ${ns}/${name} (${subresource})`);
      return kube.createSubresource(r, ns, name, subresource, body);
    },
    async patch(r, ns, name, patch, subresource) {
      gate("PATCH", `${r.kind} ${ns}/${name}${subresource ? ` (${subresource})` : ""}`);
      return kube.patch(r, ns, name, patch, subresource);
    },
    async delete(r, ns, name, uid) {
      gate("DELETE", `${r.kind} ${ns}/${name}`);
      return kube.delete(r, ns, name, uid);
    },
  };
}

/**
 * `client` whose calls that change a node (apply, teardown) are sent only while `isLeader()`;
 * plan and status (read-only on the agent) pass. A refused call is "Aborted", as when the
 * operator stops: the reconcile ends without a write and the next leader plans again.
 */
export function leaderOnlyAgentChanges(
  client: AgentClient,
  isLeader: () => boolean,
  identity: string,
): AgentClient {
  const gate = (node: string, call: string) => {
    if (!isLeader())
      throw new AgentCallError(
        node,
        0,
        "Aborted",
        `node ${node}: POST /v1/${call} not sent: this replica (${identity}) does not hold the leader Lease`,
      );
  };
  return {
    plan: client.plan,
    status: client.status,
    apply: async (ep, spec, planHash) => {
      gate(ep.node, "apply");
      return client.apply(ep, spec, planHash);
    },
    teardown: async (ep, spec) => {
      gate(ep.node, "teardown");
      return client.teardown(ep, spec);
    },
  };
}

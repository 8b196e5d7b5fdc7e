/**
 * The engine tests' own reads of the API server (kubernetes-e2e.test.ts, the Python LvmSystem
 * tests): the Kubernetes objects an `up` put in the state, and each read back by its REST path from
 * the API server's discovery, never through our code.
 */
import type { ControlPlane, Json } from "../env/cluster";
import type { StateResource } from "./cli";

/** A Kubernetes object an `up` created, as the state names it. */
export interface DeclaredObject {
  readonly apiVersion: string;
  readonly kind: string;
  readonly name: string;
  readonly namespace?: string;
}

/** An object as the API server holds it, or undefined when it does not exist. */
export type GetObject = (
  apiVersion: string,
  kind: string,
  name: string,
  namespace?: string,
) => Promise<Json | undefined>;

/** Kubernetes objects in the state: custom resources of the kubernetes package, not providers or the Chart component. */
export function kubernetesObjects(
  resources: readonly StateResource[],
): Array<DeclaredObject & { readonly type: string }> {
  return resources
    .filter((r) => r.type.startsWith("kubernetes:") && !r.type.startsWith("pulumi:providers:") && r.id)
    .filter((r) => r.type !== "kubernetes:helm.sh/v4:Chart")
    .map((r) => {
      const o = r.outputs as Json;
      return {
        type: r.type,
        apiVersion: o.apiVersion as string,
        kind: o.kind as string,
        name: o.metadata.name as string,
        namespace: o.metadata.namespace as string | undefined,
      };
    });
}

/**
 * Reads objects from the control plane `controlPlane()` returns (started in a beforeAll): the REST
 * path of each from the apiserver's discovery (kind → resource, namespaced or not), cached per group.
 */
export function objectGetter(controlPlane: () => ControlPlane): GetObject {
  const discovery = new Map<string, Json>();
  return async (apiVersion, kind, name, namespace) => {
    const cp = controlPlane();
    const base = apiVersion.includes("/") ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
    if (!discovery.has(base)) {
      const r = await cp.request("GET", base);
      if (r.status !== 200)
        throw new Error(`discovery of ${base}: HTTP ${r.status}: ${JSON.stringify(r.body)}`);
      discovery.set(base, r.body);
    }
    const resource = (discovery.get(base).resources as Json[]).find(
      (x) => x.kind === kind && !x.name.includes("/"),
    );
    if (!resource) throw new Error(`the apiserver serves no ${kind} in ${apiVersion}`);
    const ns = resource.namespaced ? `/namespaces/${namespace ?? "default"}` : "";
    const r = await cp.request("GET", `${base}${ns}/${resource.name}/${name}`);
    if (r.status === 404) return undefined;
    if (r.status !== 200) throw new Error(`GET ${kind} ${namespace ?? ""}/${name}: HTTP ${r.status}`);
    return r.body;
  };
}

/** The declared objects the API server does not hold: "<kind> <namespace>/<name>" each. */
export async function missingObjects(declared: readonly DeclaredObject[], get: GetObject): Promise<string[]> {
  const missing: string[] = [];
  for (const o of declared)
    if (!(await get(o.apiVersion, o.kind, o.name, o.namespace)))
      missing.push(`${o.kind} ${o.namespace ?? ""}/${o.name}`);
  return missing;
}

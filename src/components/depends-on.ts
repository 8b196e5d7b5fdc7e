import * as pulumi from "@pulumi/pulumi";

/**
 * `dependsOn` with more resources, each once: a NodeSet's system, a Topolvm's system and node sets.
 * An Output or Promise of resources is resolved first (pulumi.output leaves resources as they are).
 */
export function withDependencies(
  dependsOn: pulumi.ResourceOptions["dependsOn"],
  extra: readonly pulumi.Resource[],
): pulumi.ResourceOptions["dependsOn"] {
  if (dependsOn === undefined) return [...extra];
  if (Array.isArray(dependsOn)) {
    const missing = extra.filter((r) => !dependsOn.includes(r));
    return missing.length ? [...dependsOn, ...missing] : dependsOn;
  }
  if (pulumi.Resource.isInstance(dependsOn)) return [dependsOn, ...extra.filter((r) => r !== dependsOn)];
  return pulumi
    .output(dependsOn as pulumi.Input<pulumi.Resource | pulumi.Resource[]>)
    .apply((resolved) => [...[resolved].flat(), ...extra]) as pulumi.Output<pulumi.Resource[]>;
}

import * as pulumi from "@pulumi/pulumi";

/**
 * TEST-ONLY, for the Pulumi programs of the Kubernetes-provider tier (kubernetes-program,
 * crd-adoption-program), which run without a kubelet: the resource as given, annotated
 * `pulumi.com/skipAwait: "true"` so the provider does not wait for a rollout or an endpoint that
 * cannot come. Never in a user's program.
 */
export function withSkipAwait(args: pulumi.ResourceTransformationArgs): pulumi.ResourceTransformationResult {
  const metadata = pulumi.output(args.props.metadata as pulumi.Input<Record<string, unknown>>);
  return {
    props: {
      ...args.props,
      metadata: metadata.apply((m: Record<string, unknown> | undefined) => ({
        ...m,
        annotations: {
          ...((m?.annotations as Record<string, string> | undefined) ?? {}),
          "pulumi.com/skipAwait": "true",
        },
      })),
    },
    opts: args.opts,
  };
}

import * as pulumi from "@pulumi/pulumi";
import { z } from "zod";
import { DEFAULT_IMAGE } from "../version";

/*
 * The image LvmSystem's pods run, pinned by digest when the digest is known: `npm run image` prints
 * the manifest digest of what it built (`manifest sha256:…`), and `agentImageDigest` makes the
 * pods name `<agentImage>@sha256:…`, which the runtime resolves by content, never by a tag that
 * can be moved.
 */

export const imageDigestSchema = z.string().regex(/^sha256:[0-9a-f]{64}$/, {
  error: (i) => `must be a manifest digest "sha256:<64 hex digits>" (got ${JSON.stringify(i.input)})`,
});

/** The agent's image reference: `agentImage` (or the default), with `@<digest>` when one is given. */
export function agentImageRef(args: {
  readonly agentImage?: pulumi.Input<string>;
  readonly agentImageDigest?: string;
}): pulumi.Input<string> {
  const image = args.agentImage ?? DEFAULT_IMAGE;
  const digest = args.agentImageDigest;
  if (!digest) return image;
  const pin = (ref: string) => {
    if (ref.includes("@"))
      throw new Error(
        `agentImage ${JSON.stringify(ref)} already names a digest; agentImageDigest is ${digest}`,
      );
    return `${ref}@${digest}`;
  };
  return typeof image === "string" ? pin(image) : pulumi.output(image).apply(pin);
}

/** A string agentImage that already names a digest cannot take another one. */
export function imageDigestProblems(args: {
  readonly agentImage?: pulumi.Input<string>;
  readonly agentImageDigest?: string;
}): { path: string; message: string }[] {
  return args.agentImageDigest && typeof args.agentImage === "string" && args.agentImage.includes("@")
    ? [
        {
          path: "args.agentImageDigest",
          message: `agentImage ${JSON.stringify(args.agentImage)} already names a digest`,
        },
      ]
    : [];
}

import type { KubeClient, KubeObject, KubePaths } from "../../kube/client";
import { sleep, type Clock } from "../../kube/clock";
import { KubeApiError } from "../../kube/errors";
import type { Resource } from "../../kube/resources";
import {
  caDue,
  leafDue,
  nextCheck,
  renewalTime,
  signingCa,
  trustedCas,
  type CertificateSettings,
  type LeafReason,
} from "./renewal";
import {
  certificateFacts,
  issueCa,
  issueLeaf,
  pemCertificates,
  signedBy,
  type CertificateFacts,
} from "../../tls/x509";

/*
 * The operator's own certificate authority (docs/operator.md, Certificates): a CA Secret it creates
 * and keeps in its namespace (the CA's key never leaves it), the serving Secrets it issues from it
 * (kubernetes.io/tls plus ca.crt), updated in place, and the admission webhook's caBundle, set by
 * server-side apply under its own field manager. Only the leader runs it.
 */

const SECRETS: Resource = { group: "", version: "v1", plural: "secrets", kind: "Secret", namespaced: true };
/** The rotation a serving Secret's certificate was issued for. */
export const ROTATION_ANNOTATION = "lvm.topolvm.io/certificate-rotation";
/** The field manager of the caBundle. */
export const CA_BUNDLE_FIELD_MANAGER = "pulumi-lvm-operator";
const MANAGED_BY = { "app.kubernetes.io/managed-by": "pulumi-lvm-operator" };
/** How often the Secrets are looked at anyway (one deleted by hand comes back). */
const RESYNC_MS = 10 * 60_000;
/** How often while the webhook configuration does not exist yet (LvmSystem creates it after the operator). */
const WAIT_FOR_WEBHOOK_MS = 1_000;

/** A serving Secret the operator issues. */
export interface ServingTarget {
  readonly secret: string;
  readonly commonName: string;
  readonly dnsNames: readonly string[];
}

export interface CertificateIssuerOptions {
  readonly kube: KubeClient & Partial<KubePaths>;
  readonly clock: Clock;
  readonly log: (entry: Record<string, unknown>) => void;
  readonly namespace: string;
  /** The CA's Secret (Opaque: tls.crt, tls.key, previous.crt). */
  readonly caSecret: string;
  readonly targets: readonly ServingTarget[];
  /** The ValidatingWebhookConfiguration whose caBundle is set (to the webhook Secret's ca.crt). */
  readonly webhookConfiguration?: string;
  readonly settings: CertificateSettings;
}

interface SecretObject extends KubeObject {
  type?: string;
  data?: Record<string, string>;
}

interface Ca {
  readonly pem: string;
  readonly key: string;
  readonly facts: CertificateFacts;
}

const b64 = (text: string) => Buffer.from(text, "utf8").toString("base64");
const unb64 = (text: string | undefined) => (text ? Buffer.from(text, "base64").toString("utf8") : "");

export class CertificateIssuer {
  #ready = false;
  constructor(private readonly o: CertificateIssuerOptions) {}

  /** True once every serving Secret exists with a valid certificate (the operator's readiness). */
  get ready(): boolean {
    return this.#ready;
  }

  /** Brings the CA, the serving Secrets and the caBundle up to date; returns when to look again (ms since the epoch). */
  async ensure(): Promise<number> {
    const now = this.o.clock.now();
    const { current, previous } = await this.#ensureCa(now);
    const bundle = trustedCas(current.facts, previous?.facts, now);
    const bundlePem = [current, previous]
      .filter((c): c is Ca => !!c && bundle.includes(c.facts))
      .map((c) => c.pem)
      .join("");
    const times = [renewalTime(current.facts), current.facts.notBefore + this.o.settings.caPublishMs];
    if (previous) times.push(previous.facts.notAfter);
    for (const target of this.o.targets)
      times.push(await this.#ensureServing(target, { current, previous }, bundlePem, now));
    this.#ready = true;
    const webhookThere = await this.#ensureCaBundle(bundlePem);
    return webhookThere ? nextCheck(times, now, RESYNC_MS) : now + WAIT_FOR_WEBHOOK_MS;
  }

  /** ensure() until `signal` aborts; a failure is logged and tried again 10 s later. */
  async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      let at: number;
      try {
        at = await this.ensure();
      } catch (e) {
        this.o.log({ msg: "certificates not ensured", error: (e as Error).message });
        at = this.o.clock.now() + 10_000;
      }
      await sleep(this.o.clock, Math.max(0, at - this.o.clock.now()), signal);
    }
  }

  async #ensureCa(now: number): Promise<{ current: Ca; previous?: Ca }> {
    const { namespace, caSecret } = this.o;
    const stored = await this.o.kube.get<SecretObject>(SECRETS, namespace, caSecret);
    const read = (cert: string, key: string): Ca | undefined => {
      try {
        return cert ? { pem: cert, key, facts: certificateFacts(cert) } : undefined;
      } catch {
        return undefined; // unreadable: replaced as if missing
      }
    };
    const current = stored && read(unb64(stored.data?.["tls.crt"]), unb64(stored.data?.["tls.key"]));
    const previous = stored && read(unb64(stored.data?.["previous.crt"]), "");
    const why = caDue(current?.facts, now);
    if (!why && current) return { current, ...(previous ? { previous } : {}) };
    const issued = await issueCa({
      now: new Date(now),
      days: this.o.settings.caDays,
      commonName: `pulumi-lvm ${namespace} CA`,
    });
    const fresh: Ca = { pem: issued.cert, key: issued.key, facts: certificateFacts(issued.cert) };
    const data = {
      "tls.crt": b64(issued.cert),
      "tls.key": b64(issued.key),
      ...(current ? { "previous.crt": b64(current.pem) } : {}),
    };
    if (stored)
      await this.o.kube.patch(SECRETS, namespace, caSecret, {
        metadata: { resourceVersion: stored.metadata.resourceVersion },
        data: { ...data, ...(current ? {} : { "previous.crt": null }) },
      });
    else
      await this.o.kube.create<SecretObject>(SECRETS, namespace, {
        apiVersion: "v1",
        kind: "Secret",
        metadata: { name: caSecret, namespace, labels: MANAGED_BY },
        type: "Opaque",
        data,
      } as SecretObject);
    this.o.log({ msg: "certificate authority issued", secret: caSecret, reason: why, ...facts(fresh.facts) });
    return { current: fresh, ...(current ? { previous: current } : {}) };
  }

  /** The serving Secret, issued or updated in place when due; returns its renewal time. */
  async #ensureServing(
    target: ServingTarget,
    cas: { current: Ca; previous?: Ca | undefined },
    bundlePem: string,
    now: number,
  ): Promise<number> {
    const { namespace, settings } = this.o;
    const stored = await this.o.kube.get<SecretObject>(SECRETS, namespace, target.secret);
    const leafPem = unb64(stored?.data?.["tls.crt"]);
    let leaf: CertificateFacts | undefined;
    try {
      leaf = leafPem ? certificateFacts(leafPem) : undefined;
    } catch {
      leaf = undefined;
    }
    const signer = [cas.current, cas.previous].find((c) => c && leaf && signedBy(leafPem, c.pem));
    const rotation = Number(stored?.metadata.annotations?.[ROTATION_ANNOTATION] ?? "-1");
    const why: LeafReason | undefined = leafDue(
      { ...(leaf ? { leaf } : {}), ...(signer ? { signedBy: signer.facts } : {}), rotation },
      { current: cas.current.facts, ...(cas.previous ? { previous: cas.previous.facts } : {}) },
      now,
      settings,
    );
    if (!why) {
      if (unb64(stored?.data?.["ca.crt"]) !== bundlePem)
        await this.o.kube.patch(SECRETS, namespace, target.secret, {
          metadata: { resourceVersion: stored!.metadata.resourceVersion },
          data: { "ca.crt": b64(bundlePem) },
        });
      return renewalTime(leaf!);
    }
    const byCa = signingCa(cas.current.facts, cas.previous?.facts, now, settings);
    const ca = byCa === cas.current.facts ? cas.current : cas.previous!;
    const issued = await issueLeaf({
      now: new Date(now),
      days: settings.leafDays,
      ca: { cert: ca.pem, key: ca.key },
      commonName: target.commonName,
      dnsNames: target.dnsNames,
    });
    const data = { "tls.crt": b64(issued.cert), "tls.key": b64(issued.key), "ca.crt": b64(bundlePem) };
    const annotations = { [ROTATION_ANNOTATION]: String(settings.rotation) };
    if (stored)
      // In place: the same object (uid), so the kubelet updates every pod's volume with no restart.
      await this.o.kube.patch(SECRETS, namespace, target.secret, {
        metadata: { resourceVersion: stored.metadata.resourceVersion, annotations, labels: MANAGED_BY },
        data,
      });
    else
      await this.o.kube.create<SecretObject>(SECRETS, namespace, {
        apiVersion: "v1",
        kind: "Secret",
        metadata: { name: target.secret, namespace, labels: MANAGED_BY, annotations },
        type: "kubernetes.io/tls",
        data,
      } as SecretObject);
    const issuedFacts = certificateFacts(issued.cert);
    this.o.log({
      msg: "serving certificate issued",
      secret: target.secret,
      reason: why,
      ...facts(issuedFacts),
    });
    return renewalTime(issuedFacts);
  }

  /** Sets the webhook's caBundle; false when the configuration does not exist yet. */
  async #ensureCaBundle(bundlePem: string): Promise<boolean> {
    const name = this.o.webhookConfiguration;
    if (!name) return true;
    const path = `/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/${name}`;
    let live: { webhooks?: Array<{ name: string; clientConfig?: { caBundle?: string } }> };
    try {
      live = (await this.o.kube.getPath!(path)) as typeof live;
    } catch (e) {
      if (e instanceof KubeApiError && e.status === 404) return false;
      throw e;
    }
    const caBundle = b64(bundlePem);
    const webhooks = live.webhooks ?? [];
    if (webhooks.every((w) => w.clientConfig?.caBundle === caBundle)) return true;
    await this.o.kube.applyPath!(
      path,
      {
        apiVersion: "admissionregistration.k8s.io/v1",
        kind: "ValidatingWebhookConfiguration",
        metadata: { name },
        webhooks: webhooks.map((w) => ({ name: w.name, clientConfig: { caBundle } })),
      },
      CA_BUNDLE_FIELD_MANAGER,
    );
    this.o.log({ msg: "webhook caBundle set", configuration: name, cas: pemCertificates(bundlePem).length });
    return true;
  }
}

function facts(f: CertificateFacts): Record<string, string> {
  return { notAfter: new Date(f.notAfter).toISOString(), serial: f.serial, fingerprint256: f.fingerprint256 };
}

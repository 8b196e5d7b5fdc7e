import type { KubeClient } from "../../kube/client";
import { isNotFound } from "../../kube/errors";
import { PERSISTENT_VOLUMES, TOPOLVM_LOGICAL_VOLUMES } from "../../kube/resources";
import type { LogicalVolumeObject, PersistentVolumeObject } from "../admission/in-use";
import type { WaitingPlan } from "../agents/pending";

/**
 * A waiting repair that removes logical volumes with their data (missingDevicePolicy
 * RemoveWithLostVolumes) names, for each, the PersistentVolumeClaim that uses it, through TopoLVM's
 * LogicalVolume objects (their status.volumeID is the LV's name, spec.nodeName the node) and the
 * PersistentVolume each is named after. Read only while such a plan waits: a rare event, so a list
 * of every LogicalVolume is affordable. An LV TopoLVM does not know (not one of its volumes, or
 * TopoLVM not installed) is named alone.
 */
export async function withLostClaims(waiting: WaitingPlan, kube: KubeClient): Promise<WaitingPlan> {
  if (!waiting.steps.some((s) => s.loses?.length)) return waiting;
  let volumes: readonly LogicalVolumeObject[];
  try {
    volumes = (await kube.list<LogicalVolumeObject>(TOPOLVM_LOGICAL_VOLUMES, undefined)).items;
  } catch (e) {
    if (isNotFound(e)) return waiting;
    throw e;
  }
  const lost = new Set(waiting.steps.flatMap((s) => s.loses ?? []).map(lvName));
  const mine = volumes.filter((v) => v.spec?.nodeName === waiting.node && lost.has(v.status?.volumeID ?? ""));
  const claims = new Map<string, string>();
  for (const v of mine) {
    const pv = await kube.get<PersistentVolumeObject>(
      PERSISTENT_VOLUMES,
      undefined,
      v.spec?.name ?? v.metadata.name,
    );
    const ref = pv?.spec?.claimRef;
    if (ref?.name) claims.set(v.status!.volumeID!, `${ref.namespace ?? ""}/${ref.name}`);
  }
  return { ...waiting, steps: waiting.steps.map((s) => (s.loses ? { ...s, loses: s.loses.map(label) } : s)) };

  function label(volume: string): string {
    const claim = claims.get(lvName(volume));
    return claim ? `${volume} (PVC ${claim})` : volume;
  }
}

/** "vg1/lv" → "lv". */
function lvName(volume: string): string {
  return volume.slice(volume.indexOf("/") + 1);
}

import type { AgentService } from "../agent-service";
import { EXPOSITION_CONTENT_TYPE } from "../../metrics/prometheus";
import { route, type Route } from "./route";

/** `/metrics` in the Prometheus text format; no auth (it names volume groups and sizes, nothing secret). */
export function metricsRoute(service: Pick<AgentService, "metricsText">): Route {
  return route({
    method: "GET",
    path: "/metrics",
    authenticated: false,
    summary:
      "Prometheus metrics: volume group size/free, thin pool data/metadata usage ratio, operations, commands, durations, errors.",
    responses: { 200: { description: "text/plain; version=0.0.4" } },
    handle: async () => ({
      status: 200,
      text: await service.metricsText(),
      contentType: EXPOSITION_CONTENT_TYPE,
    }),
  });
}

import { route, type Route } from "./route";

export interface HealthOptions {
  /** Ready when undefined is returned; otherwise the reason it is not. */
  readonly notReady: () => string | undefined;
}

/** `/healthz` (the process answers) and `/readyz` (started and not stopping); no auth. */
export function healthRoutes(options: HealthOptions): Route[] {
  return [
    route({
      method: "GET",
      path: "/healthz",
      authenticated: false,
      summary: "Liveness: the agent process answers.",
      responses: { 200: { description: "ok" } },
      handle: async () => ({ status: 200, text: "ok\n", contentType: "text/plain; charset=utf-8" }),
    }),
    route({
      method: "GET",
      path: "/readyz",
      authenticated: false,
      summary: "Readiness: started (state directory locked, journal read, listening) and not stopping.",
      responses: { 200: { description: "ready" }, 503: { description: "not ready, and why" } },
      handle: async () => {
        const reason = options.notReady();
        return reason
          ? { status: 503, text: `not ready: ${reason}\n`, contentType: "text/plain; charset=utf-8" }
          : { status: 200, text: "ok\n", contentType: "text/plain; charset=utf-8" };
      },
    }),
  ];
}

// The TypeScript client generated from the bridge's API description
// (openapi-typescript writes api.d.ts next to this file; openapi-fetch
// calls the bridge), run against a bridge by TestGeneratedClients: a send,
// a list and a media fetch, as a team's program would. Prints "ok" or
// exits 1 with what differed.
//
//   BRIDGE_URL API_KEY TO MEDIA_ID MEDIA_SHA256 must be set.
import createClient from "openapi-fetch";
import type { paths } from "./api.js";

// Node's process, declared here so that the client needs no @types/node.
declare const process: { env: Record<string, string | undefined>; exit(code: number): never };

const hex = (b: ArrayBuffer): string => Array.from(new Uint8Array(b), (x) => x.toString(16).padStart(2, "0")).join("");

const env = (name: string): string => {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set`);
  return v;
};

async function run(): Promise<void> {
  const client = createClient<paths>({ baseUrl: env("BRIDGE_URL"), headers: { "X-Api-Key": env("API_KEY") } });

  const sent = await client.POST("/api/messages", {
    body: { to: env("TO"), type: "text", text: "from the generated TypeScript client" },
  });
  const item = sent.data?.messages[0];
  if (!item || item.status === "Failed") throw new Error(`send: ${sent.response.status} ${JSON.stringify(sent.data ?? sent.error)}`);

  const list = await client.GET("/api/messages", { params: { query: { limit: 50 } } });
  const page = list.data;
  if (!page || !page.messages.some((m) => "id" in m && m.id === item.id)) {
    throw new Error(`list: ${list.response.status} has no ${item.id}: ${JSON.stringify(page ?? list.error)}`);
  }

  const media = await client.GET("/api/media/{id}", { params: { path: { id: env("MEDIA_ID") } }, parseAs: "arrayBuffer" });
  const sum = media.data ? hex(await crypto.subtle.digest("SHA-256", media.data)) : "";
  if (media.response.status !== 200 || sum !== env("MEDIA_SHA256")) {
    throw new Error(`media: ${media.response.status}, sha256 ${sum}`);
  }
}

run().then(
  () => console.log("ok"),
  (err: unknown) => {
    console.error("tsclient:", err);
    process.exit(1);
  },
);

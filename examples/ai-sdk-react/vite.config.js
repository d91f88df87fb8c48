// Vite config of the example. Inside the agentrt repository, `agentrt` and
// `agentrt/ai` resolve to the package that `make build` writes to dist/.
// In an app of your own, `npm install agentrt ai @ai-sdk/react react
// react-dom` and delete the alias: the imports stay the same.
import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import react from "@vitejs/plugin-react";
import { defineConfig } from "vite";

const here = path.dirname(fileURLToPath(import.meta.url));
const dist = process.env.AGENTRT_DIST ? path.resolve(process.env.AGENTRT_DIST) : path.resolve(here, "../../dist");

if (!existsSync(path.join(dist, "glue.js"))) {
  throw new Error(`${dist} holds no built agentrt package: run \`make build\` at the repository root first (or set AGENTRT_DIST)`);
}

export default defineConfig({
  root: here,
  plugins: [react()],
  resolve: {
    alias: [
      { find: /^agentrt$/, replacement: path.join(dist, "glue.js") },
      { find: /^agentrt\/ai$/, replacement: path.join(dist, "ai.js") },
    ],
  },
  build: { outDir: path.join(here, "dist"), emptyOutDir: true },
  server: { host: "127.0.0.1" },
  preview: { host: "127.0.0.1" },
});

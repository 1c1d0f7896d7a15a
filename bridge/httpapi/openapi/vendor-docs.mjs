// Vendors the page at /docs/ from the npm registry: swagger-ui-dist's
// bundle, stylesheet, favicon and licence, into docs/. Run it from this
// directory with node when updating the version:
//
//	node vendor-docs.mjs
//
// The stylesheet's data: images are written to docs/img/ and referred to
// by URL instead, so that the page works under the dashboard's
// Content-Security-Policy (img-src 'self'); source map comments are
// dropped (the maps are not vendored).
import { execFileSync } from "node:child_process";
import { mkdtempSync, mkdirSync, readFileSync, writeFileSync, rmSync, copyFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const pkg = "swagger-ui-dist@5.35.0";
const tmp = mkdtempSync(join(tmpdir(), "swagger-ui-"));
execFileSync("npm", ["pack", pkg, "--pack-destination", tmp], { stdio: "inherit" });
execFileSync("sh", ["-c", `tar xzf ${tmp}/*.tgz -C ${tmp}`]);
const src = join(tmp, "package");
const out = "docs";
rmSync(join(out, "img"), { recursive: true, force: true });
mkdirSync(join(out, "img"), { recursive: true });

const dropMap = (s) => s.replace(/\n?\/\/# sourceMappingURL=\S+\s*$/, "\n").replace(/\/\*# sourceMappingURL=[^*]*\*\//g, "");
writeFileSync(join(out, "swagger-ui-bundle.js"), dropMap(readFileSync(join(src, "swagger-ui-bundle.js"), "utf8")));
copyFileSync(join(src, "LICENSE"), join(out, "swagger-ui.LICENSE"));
copyFileSync(join(src, "NOTICE"), join(out, "swagger-ui.NOTICE"));
copyFileSync(join(src, "swagger-ui-bundle.js.LICENSE.txt"), join(out, "swagger-ui-bundle.js.LICENSE.txt"));
copyFileSync(join(src, "favicon-32x32.png"), join(out, "favicon.png"));

// Each url(data:…) becomes url(img/N.ext), N counting distinct images.
const css = dropMap(readFileSync(join(src, "swagger-ui.css"), "utf8"));
const names = new Map();
const ext = { "image/svg+xml": "svg", "image/png": "png", "image/jpeg": "jpg", "image/gif": "gif" };
const rewritten = css.replace(/url\((?:"((?:[^"\\]|\\.)*)"|'((?:[^'\\]|\\.)*)'|(data:[^)]*))\)/g, (m, dq, sq, bare) => {
  const url = (dq ?? sq ?? bare).replace(/\\(.)/g, "$1");
  if (!url.startsWith("data:")) return m;
  const comma = url.indexOf(",");
  const meta = url.slice(5, comma).split(";");
  const data = url.slice(comma + 1);
  const bytes = meta.includes("base64") ? Buffer.from(data, "base64") : Buffer.from(decodeURIComponent(data), "utf8");
  const key = bytes.toString("base64");
  if (!names.has(key)) {
    const name = `img/${names.size + 1}.${ext[meta[0]] ?? "bin"}`;
    names.set(key, name);
    writeFileSync(join(out, name), bytes);
  }
  return `url(${names.get(key)})`;
});
if (rewritten.includes("data:")) throw new Error("a data: URL is left in the stylesheet");
writeFileSync(join(out, "swagger-ui.css"), rewritten);
rmSync(tmp, { recursive: true, force: true });
console.log(`${pkg}: ${names.size} images moved out of the stylesheet`);

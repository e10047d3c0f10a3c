// Draws the site's icon — a door standing open onto a lit vestibule — into public/favicon.svg,
// public/favicon.ico (one 32×32 PNG inside an ICO container) and public/logo.png (96×96, the logo
// app/theme.css names for the pages' header and the e-mails) from the one list of shapes below, so
// they never differ. Run `npx tsx scripts/make-favicon.ts` after changing a shape; both files
// are committed. No image library: the PNG is written by hand (zlib deflate, CRC-32).
import { writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { crc32, deflateSync } from "node:zlib";

const SIZE = 32;
type Rgb = [number, number, number];
type Shape =
  | { kind: "rect"; x: number; y: number; w: number; h: number; r?: number; fill: Rgb }
  | { kind: "circle"; cx: number; cy: number; r: number; fill: Rgb };

const NIGHT: Rgb = [0x1f, 0x3a, 0x5f];
const WALL: Rgb = [0xf4, 0xef, 0xe6];
const LIGHT: Rgb = [0xe8, 0xa8, 0x3e];

// Painted in order, later over earlier.
const SHAPES: Shape[] = [
  { kind: "rect", x: 0, y: 0, w: 32, h: 32, r: 6, fill: NIGHT },
  { kind: "rect", x: 9, y: 5, w: 14, h: 22, fill: WALL },
  { kind: "rect", x: 11, y: 7, w: 10, h: 20, fill: LIGHT },
  { kind: "rect", x: 11, y: 7, w: 4, h: 20, fill: NIGHT },
  { kind: "circle", cx: 19, cy: 18, r: 1.25, fill: NIGHT },
  { kind: "rect", x: 5, y: 27, w: 22, h: 2, fill: WALL },
];

const hex = ([r, g, b]: Rgb) => `#${[r, g, b].map((v) => v.toString(16).padStart(2, "0")).join("")}`;

function svg(): string {
  const body = SHAPES.map((s) =>
    s.kind === "rect"
      ? `  <rect x="${s.x}" y="${s.y}" width="${s.w}" height="${s.h}"${s.r ? ` rx="${s.r}"` : ""} fill="${hex(s.fill)}"/>`
      : `  <circle cx="${s.cx}" cy="${s.cy}" r="${s.r}" fill="${hex(s.fill)}"/>`,
  ).join("\n");
  return `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${SIZE} ${SIZE}" width="${SIZE}" height="${SIZE}">\n  <title>Vestibule</title>\n${body}\n</svg>\n`;
}

function inside(s: Shape, px: number, py: number): boolean {
  if (s.kind === "circle") return (px - s.cx) ** 2 + (py - s.cy) ** 2 <= s.r ** 2;
  if (px < s.x || px > s.x + s.w || py < s.y || py > s.y + s.h) return false;
  const r = s.r ?? 0;
  if (r === 0) return true;
  const cx = Math.min(Math.max(px, s.x + r), s.x + s.w - r);
  const cy = Math.min(Math.max(py, s.y + r), s.y + s.h - r);
  return (px - cx) ** 2 + (py - cy) ** 2 <= r * r;
}

/** RGBA rows of a `size`×`size` image, 4×4 samples per pixel for smooth edges. */
function raster(size = SIZE): Buffer {
  const out = Buffer.alloc(size * size * 4);
  const n = 4;
  const scale = SIZE / size;
  for (let y = 0; y < size; y++) {
    for (let x = 0; x < size; x++) {
      const sum = [0, 0, 0, 0];
      for (let sy = 0; sy < n; sy++) {
        for (let sx = 0; sx < n; sx++) {
          const px = (x + (sx + 0.5) / n) * scale;
          const py = (y + (sy + 0.5) / n) * scale;
          let color: Rgb | null = null;
          for (const s of SHAPES) if (inside(s, px, py)) color = s.fill;
          if (color) {
            sum[0]! += color[0];
            sum[1]! += color[1];
            sum[2]! += color[2];
            sum[3]! += 1;
          }
        }
      }
      const covered = sum[3]!;
      const i = (y * size + x) * 4;
      if (covered === 0) continue;
      out[i] = Math.round(sum[0]! / covered);
      out[i + 1] = Math.round(sum[1]! / covered);
      out[i + 2] = Math.round(sum[2]! / covered);
      out[i + 3] = Math.round((255 * covered) / (n * n));
    }
  }
  return out;
}

function chunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, "ascii"), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([length, body, crc]);
}

function png(rgba: Buffer, size = SIZE): Buffer {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(size, 0);
  header.writeUInt32BE(size, 4);
  header.set([8, 6, 0, 0, 0], 8); // 8 bits, RGBA, deflate, no filter method, no interlace
  const rows = Buffer.concat(Array.from({ length: size }, (_, y) => Buffer.concat([Buffer.from([0]), rgba.subarray(y * size * 4, (y + 1) * size * 4)])));
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk("IHDR", header),
    chunk("IDAT", deflateSync(rows, { level: 9 })),
    chunk("IEND", Buffer.alloc(0)),
  ]);
}

/** An ICO file holding one PNG image (allowed since Windows Vista, read by every browser). */
function ico(image: Buffer): Buffer {
  const dir = Buffer.alloc(6 + 16);
  dir.writeUInt16LE(0, 0); // reserved
  dir.writeUInt16LE(1, 2); // type: icon
  dir.writeUInt16LE(1, 4); // one image
  dir.writeUInt8(SIZE, 6);
  dir.writeUInt8(SIZE, 7);
  dir.writeUInt8(0, 8); // no palette
  dir.writeUInt8(0, 9);
  dir.writeUInt16LE(1, 10); // planes
  dir.writeUInt16LE(32, 12); // bits per pixel
  dir.writeUInt32LE(image.length, 14);
  dir.writeUInt32LE(dir.length, 18);
  return Buffer.concat([dir, image]);
}

const publicDir = path.join(path.dirname(fileURLToPath(import.meta.url)), "../public");
writeFileSync(path.join(publicDir, "favicon.svg"), svg());
writeFileSync(path.join(publicDir, "favicon.ico"), ico(png(raster())));
// A PNG, not the SVG: many mail programs show no SVG image. Three times the header's 32 px.
const LOGO_SIZE = 96;
writeFileSync(path.join(publicDir, "logo.png"), png(raster(LOGO_SIZE), LOGO_SIZE));
console.log("wrote public/favicon.svg, public/favicon.ico and public/logo.png");

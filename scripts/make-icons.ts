/**
 * Draws the app icon and writes the PNGs electron-builder packages: `build/icon.png`
 * (1024×1024; macOS's icns and Windows' ico are derived from it) and `build/icons/NxN.png`
 * (the Linux hicolor set). Run with `npm run icons`; the PNGs are committed, so a build needs
 * neither this script nor an image library.
 *
 * The design is a rounded square in the app's accent green with a white glyph: log lines (a
 * timestamp and a message) above a histogram, the two halves of the explorer. Shapes are
 * rounded rectangles measured on a 1024 grid and rendered with a signed-distance coverage, so
 * every size is drawn from the vectors rather than scaled down from a bitmap; sizes up to 48
 * use a simpler glyph on a 64-unit grid so its edges fall on whole pixels.
 *
 * Only Node is used (node:zlib for deflate and CRC-32): a PNG encoder for RGBA is a few dozen
 * lines, and an image dependency would be one more thing to install for a file that rarely
 * changes.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import zlib from 'node:zlib';

export const ICON_SIZES = [16, 32, 48, 64, 128, 256, 512] as const;
export const MAIN_ICON_SIZE = 1024;

/** Straight (not premultiplied) RGBA, each 0..1. */
type Rgba = readonly [number, number, number, number];

/** A rounded rectangle on the 1024-unit grid. */
interface Shape {
  x0: number;
  y0: number;
  x1: number;
  y1: number;
  r: number;
  /** The colour at a height (units), so the body can carry a gradient. */
  paint: (y: number) => Rgba;
}

const GRID = 1024;

function hex(h: string, alpha = 1): Rgba {
  const n = Number.parseInt(h.slice(1), 16);
  return [((n >> 16) & 255) / 255, ((n >> 8) & 255) / 255, (n & 255) / 255, alpha];
}

// The renderer's accent (the light theme's `--accent` in renderer/src/ui/tokens.css) at the bottom,
// a lighter step of it at the top.
const ACCENT_TOP = hex('#17a372');
const ACCENT = hex('#0b8a5f');
const WHITE = hex('#ffffff');
const MINT = hex('#b5ecd2');

const solid = (c: Rgba) => () => c;
function vertical(top: Rgba, bottom: Rgba, y0: number, y1: number): (y: number) => Rgba {
  const mix = (i: 0 | 1 | 2 | 3, t: number) => top[i] + (bottom[i] - top[i]) * t;
  return (y) => {
    const t = Math.min(1, Math.max(0, (y - y0) / (y1 - y0)));
    return [mix(0, t), mix(1, t), mix(2, t), mix(3, t)];
  };
}

const rect = (x0: number, y0: number, x1: number, y1: number, r: number, paint: (y: number) => Rgba): Shape => ({ x0, y0, x1, y1, r, paint });

/** From 64 px up: a margin, three log lines (timestamp + message) and six histogram bars. */
function largeGlyph(): Shape[] {
  const body = rect(64, 64, 960, 960, 200, vertical(ACCENT_TOP, ACCENT, 64, 960));
  const lines = [
    { y: 208, end: 768 },
    { y: 304, end: 832 },
    { y: 400, end: 704 },
  ].flatMap(({ y, end }) => [rect(192, y, 320, y + 48, 24, solid(MINT)), rect(352, y, end, y + 48, 24, solid(WHITE))]);
  const heights = [112, 192, 144, 256, 208, 128];
  const bars = heights.map((h, i) => {
    const x = 192 + i * 112;
    return rect(x, 816 - h, x + 80, 816, 16, solid(WHITE));
  });
  return [body, ...lines, ...bars];
}

/** Up to 48 px: the body fills the square, two 1-px lines (at 16 px) and three bars. */
function smallGlyph(): Shape[] {
  const body = rect(0, 0, 1024, 1024, 192, vertical(ACCENT_TOP, ACCENT, 0, 1024));
  return [
    body,
    rect(192, 192, 832, 256, 0, solid(WHITE)),
    rect(192, 320, 640, 384, 0, solid(WHITE)),
    rect(192, 640, 320, 832, 0, solid(WHITE)),
    rect(448, 512, 576, 832, 0, solid(WHITE)),
    rect(704, 576, 832, 832, 0, solid(WHITE)),
  ];
}

/** Signed distance (units) from a point to a rounded rectangle: negative inside. */
function distance(px: number, py: number, s: Shape): number {
  const hx = (s.x1 - s.x0) / 2;
  const hy = (s.y1 - s.y0) / 2;
  const qx = Math.abs(px - (s.x0 + hx)) - hx + s.r;
  const qy = Math.abs(py - (s.y0 + hy)) - hy + s.r;
  return Math.hypot(Math.max(qx, 0), Math.max(qy, 0)) + Math.min(Math.max(qx, qy), 0) - s.r;
}

/** The icon at `size`×`size` as straight RGBA bytes, row by row. */
export function renderIcon(size: number): Uint8Array {
  const shapes = size <= 48 ? smallGlyph() : largeGlyph();
  const unitsPerPixel = GRID / size;
  const out = new Uint8Array(size * size * 4);
  for (let j = 0; j < size; j++) {
    for (let i = 0; i < size; i++) {
      const ux = (i + 0.5) * unitsPerPixel;
      const uy = (j + 0.5) * unitsPerPixel;
      let [r, g, b, a] = [0, 0, 0, 0];
      for (const s of shapes) {
        // Coverage of this pixel by the shape's edge, from the distance in pixels.
        const cover = Math.min(1, Math.max(0, 0.5 - distance(ux, uy, s) / unitsPerPixel));
        if (cover === 0) continue;
        const c = s.paint(uy);
        const sa = c[3] * cover;
        const na = sa + a * (1 - sa);
        r = (c[0] * sa + r * a * (1 - sa)) / na;
        g = (c[1] * sa + g * a * (1 - sa)) / na;
        b = (c[2] * sa + b * a * (1 - sa)) / na;
        a = na;
      }
      const o = (j * size + i) * 4;
      out[o] = Math.round(r * 255);
      out[o + 1] = Math.round(g * 255);
      out[o + 2] = Math.round(b * 255);
      out[o + 3] = Math.round(a * 255);
    }
  }
  return out;
}

function chunk(type: string, data: Uint8Array): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'ascii');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(zlib.crc32(data, zlib.crc32(head.subarray(4))), 0);
  return Buffer.concat([head, data, crc]);
}

/** A PNG of 8-bit RGBA (colour type 6), every row with filter 0: deflate does the rest. */
export function encodePng(width: number, height: number, rgba: Uint8Array): Buffer {
  if (rgba.length !== width * height * 4) throw new Error(`expected ${width * height * 4} bytes, got ${rgba.length}`);
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr.set([8, 6, 0, 0, 0], 8); // depth 8, RGBA, deflate, adaptive filtering, no interlace
  const stride = width * 4;
  const raw = Buffer.alloc((stride + 1) * height);
  for (let y = 0; y < height; y++) raw.set(rgba.subarray(y * stride, (y + 1) * stride), y * (stride + 1) + 1);
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', zlib.deflateSync(raw, { level: 9 })),
    chunk('IEND', new Uint8Array(0)),
  ]);
}

/** Every icon file, by its path relative to the build-resources folder. */
export function iconFiles(): Map<string, Buffer> {
  const files = new Map<string, Buffer>();
  files.set('icon.png', encodePng(MAIN_ICON_SIZE, MAIN_ICON_SIZE, renderIcon(MAIN_ICON_SIZE)));
  for (const size of ICON_SIZES) files.set(`icons/${size}x${size}.png`, encodePng(size, size, renderIcon(size)));
  return files;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const outDir = path.resolve(import.meta.dirname, '..', 'build');
  for (const [name, png] of iconFiles()) {
    const file = path.join(outDir, name);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, png);
    console.log(`${path.relative(process.cwd(), file)} (${png.length} bytes)`);
  }
}

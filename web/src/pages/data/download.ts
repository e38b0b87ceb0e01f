import { fetchFromApi } from '../../api.js';

/**
 * Downloads a file from the API (export, file content) and hands it to the browser as a saved
 * file. A plain link cannot do it: a session request must name its workspace in a header. The body
 * is read as a stream so the page can show how much has arrived.
 */
export async function downloadFromApi(path: string, fallbackName: string, onProgress?: (received: number, total: number | null) => void): Promise<{ name: string; size: number }> {
  const response = await fetchFromApi(path);
  const declared = Number(response.headers.get('content-length'));
  const total = Number.isFinite(declared) && declared > 0 ? declared : null;
  const chunks: Uint8Array[] = [];
  let received = 0;
  const reader = response.body?.getReader();
  if (reader) {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      received += value.byteLength;
      onProgress?.(received, total);
    }
  }
  const name = fileNameOf(response.headers.get('content-disposition')) ?? fallbackName;
  const blob = new Blob(chunks as BlobPart[], { type: response.headers.get('content-type') ?? 'application/octet-stream' });
  const url = URL.createObjectURL(blob);
  const link = document.createElement('a');
  link.href = url;
  link.download = name;
  document.body.append(link);
  link.click();
  link.remove();
  // Give the browser time to start saving before the blob goes away.
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
  return { name, size: received };
}

function fileNameOf(disposition: string | null): string | null {
  if (!disposition) return null;
  const encoded = /filename\*=UTF-8''([^;]+)/i.exec(disposition);
  if (encoded?.[1]) {
    try {
      return decodeURIComponent(encoded[1]);
    } catch {
      // fall through to the plain name
    }
  }
  return /filename="([^"]+)"/i.exec(disposition)?.[1] ?? null;
}

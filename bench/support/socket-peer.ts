/**
 * The baseline of bench/files.ts, run as its own process (child_process.fork), as the server
 * under test is: a bare TCP server on loopback, no HTTP, no disk. Each connection starts with a
 * command line, `U <bytes>\n` or `D <bytes>\n`:
 * - U: the client sends that many bytes; the peer reads them all, then answers `ok\n` and closes.
 * - D: the peer sends that many bytes (the bench's block, repeated), then closes.
 * At start it sends `{type: 'ready', port}` to the parent; it exits when the parent goes away.
 */
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { transferBlock, transferChunks } from './transfer-bytes.js';

const block = transferBlock();

function handle(socket: net.Socket): void {
  let header = Buffer.alloc(0);
  const onHeader = (chunk: Buffer) => {
    header = Buffer.concat([header, chunk]);
    const newline = header.indexOf(0x0a);
    if (newline < 0) return;
    socket.off('data', onHeader);
    const [command, count] = header.subarray(0, newline).toString('latin1').split(' ');
    // Bytes of the body that came in the same chunk as the command.
    const already = header.length - newline - 1;
    if (command === 'U') receive(socket, Number(count), already);
    else send(socket, Number(count));
  };
  socket.on('data', onHeader);
  socket.on('error', () => socket.destroy());
}

function receive(socket: net.Socket, expected: number, already: number): void {
  let received = already;
  const done = () => void socket.end('ok\n');
  if (received >= expected) return done();
  socket.on('data', (chunk: Buffer) => {
    received += chunk.length;
    if (received >= expected) done();
  });
}

function send(socket: net.Socket, bytes: number): void {
  const chunks = transferChunks(block, bytes);
  const pump = () => {
    for (let next = chunks.next(); !next.done; next = chunks.next()) {
      if (!socket.write(next.value)) return void socket.once('drain', pump);
    }
    socket.end();
  };
  pump();
}

const server = net.createServer(handle);
server.listen(0, '127.0.0.1', () => {
  process.send?.({ type: 'ready', port: (server.address() as AddressInfo).port });
});
process.on('disconnect', () => process.exit(0));

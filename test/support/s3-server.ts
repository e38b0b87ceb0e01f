import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import S3rver from 's3rver';
import type { S3Settings } from '../../src/config.js';

export interface TestS3 {
  /** Settings for a Plainbase app that keeps its files in the test bucket. */
  settings: S3Settings;
  /** Keys of the objects in the bucket under `prefix`. */
  keys(prefix?: string): Promise<string[]>;
  close(): Promise<void>;
}

/**
 * A real S3 protocol server (s3rver) on loopback with one bucket, its data in a temp folder. Not
 * a mock: the AWS SDK talks to it over HTTP as it would to AWS.
 */
export async function startTestS3(): Promise<TestS3> {
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'plainbase-s3-'));
  const bucket = 'plainbase-test';
  const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory, configureBuckets: [{ name: bucket }] });
  const { port } = await server.run();
  // s3rver accepts any credentials that are given; the pair is its documented default.
  const settings: S3Settings = {
    endpoint: `http://127.0.0.1:${port}`,
    bucket,
    region: 'us-east-1',
    accessKeyId: 'S3RVER',
    secretAccessKey: 'S3RVER',
    forcePathStyle: true,
  };
  const client = new S3Client({
    endpoint: settings.endpoint!,
    region: settings.region,
    forcePathStyle: true,
    credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
  return {
    settings,
    keys: async (prefix = '') => {
      const listed = await client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix }));
      return (listed.Contents ?? []).map((object) => object.Key!).sort();
    },
    close: async () => {
      client.destroy();
      await server.close();
      fs.rmSync(directory, { recursive: true, force: true });
    },
  };
}

/**
 * Loads `@aws-sdk/client-s3`, an optional peer dependency, on first use. A dynamic `import()`
 * keeps `taquba-workflow/stores/s3` importable without the SDK (and keeps the SDK out of every
 * other entry point); bundlers still see the literal specifier and bundle the SDK for apps that
 * use this store.
 */
import { UnsupportedPlatformError } from '../../core/errors.js';

/** The parts of the SDK the store uses. */
export type S3Sdk = Pick<
  typeof import('@aws-sdk/client-s3'),
  'S3Client' | 'GetObjectCommand' | 'HeadObjectCommand' | 'PutObjectCommand' | 'DeleteObjectCommand' | 'DeleteObjectsCommand' | 'ListObjectsV2Command'
>;

export const S3_SDK_PACKAGE = '@aws-sdk/client-s3';

/** Resolves with the SDK module. Rejects with UNSUPPORTED_PLATFORM when it cannot be loaded (not installed). */
export async function loadS3Sdk(): Promise<S3Sdk> {
  try {
    return await import('@aws-sdk/client-s3');
  } catch (e) {
    throw new UnsupportedPlatformError(
      `the s3 store needs the AWS SDK, an optional peer dependency: npm install ${S3_SDK_PACKAGE}. missing=${S3_SDK_PACKAGE}`,
      { missing: S3_SDK_PACKAGE },
      e,
    );
  }
}

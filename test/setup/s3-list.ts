/** The ListObjectsV2 answer of the S3 test server (s3-server.ts). */

export interface ListedObject {
  readonly key: string;
  readonly size: number;
  /** Quoted, as S3 sends it. */
  readonly etag: string;
  readonly lastModified: Date;
}

export interface ListPage {
  readonly bucket: string;
  readonly prefix: string;
  readonly maxKeys: number;
  readonly startAfter?: string;
  readonly continuationToken?: string;
  readonly nextContinuationToken?: string;
  readonly objects: readonly ListedObject[];
}

const esc = (s: string): string => s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' })[c]!);
const tag = (name: string, value: string | number | undefined): string => (value === undefined ? '' : `<${name}>${esc(String(value))}</${name}>`);

/** S3's XML for one page of ListObjectsV2. */
export function listObjectsV2Xml(page: ListPage): string {
  const contents = page.objects
    .map(
      (o) =>
        `<Contents>${tag('Key', o.key)}${tag('LastModified', o.lastModified.toISOString())}${tag('ETag', o.etag)}${tag('Size', o.size)}${tag('StorageClass', 'STANDARD')}</Contents>`,
    )
    .join('');
  return (
    '<?xml version="1.0" encoding="UTF-8"?>\n' +
    '<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">' +
    tag('Name', page.bucket) +
    tag('Prefix', page.prefix) +
    tag('StartAfter', page.startAfter) +
    tag('ContinuationToken', page.continuationToken) +
    tag('KeyCount', page.objects.length) +
    tag('MaxKeys', page.maxKeys) +
    tag('IsTruncated', page.nextContinuationToken !== undefined ? 'true' : 'false') +
    tag('NextContinuationToken', page.nextContinuationToken) +
    contents +
    '</ListBucketResult>'
  );
}

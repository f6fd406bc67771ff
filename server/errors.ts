/**
 * Every error the API can answer, as one union, mapped to a status and rendered in one place
 * (the envelope in docs/ARCHITECTURE.md, "Flow"): {"error": {code, status, message, errors: [{reason, location, message}]}}.
 */
import type { ErrorBody, ErrorDetail } from '../contract/api-types.ts';

export type { ErrorBody, ErrorDetail };

export type ErrorKind =
  | 'bad_request'
  | 'unauthorized'
  | 'forbidden'
  | 'not_found'
  | 'method_not_allowed'
  | 'timeout'
  | 'conflict'
  | 'aborted'
  | 'payload_too_large'
  | 'headers_too_large'
  | 'internal'
  | 'unavailable'
  | 'insufficient_storage';

const STATUS: Record<ErrorKind, { code: number; status: string }> = {
  bad_request: { code: 400, status: 'INVALID_ARGUMENT' },
  unauthorized: { code: 401, status: 'UNAUTHENTICATED' },
  forbidden: { code: 403, status: 'PERMISSION_DENIED' },
  not_found: { code: 404, status: 'NOT_FOUND' },
  method_not_allowed: { code: 405, status: 'METHOD_NOT_ALLOWED' },
  timeout: { code: 408, status: 'REQUEST_TIMEOUT' },
  conflict: { code: 409, status: 'ALREADY_EXISTS' },
  aborted: { code: 409, status: 'ABORTED' },
  payload_too_large: { code: 413, status: 'PAYLOAD_TOO_LARGE' },
  headers_too_large: { code: 431, status: 'REQUEST_HEADER_FIELDS_TOO_LARGE' },
  internal: { code: 500, status: 'INTERNAL' },
  unavailable: { code: 503, status: 'UNAVAILABLE' },
  insufficient_storage: { code: 507, status: 'INSUFFICIENT_STORAGE' },
};


export class AppError extends Error {
  constructor(
    readonly kind: ErrorKind,
    message: string,
    readonly details: ErrorDetail[] = [],
    /** Headers the answer carries (Allow on a 405, Connection: close when the body is abandoned). */
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(message);
  }

  get httpStatus(): number {
    return STATUS[this.kind].code;
  }
}

/** A 400 about one parameter. */
export function badParam(location: string, message: string, reason = 'invalid'): AppError {
  return new AppError('bad_request', message, [{ reason, location, message }]);
}

/** One 400 naming every parameter at fault. */
export function badParams(details: ErrorDetail[]): AppError {
  return new AppError('bad_request', details.map((d) => d.message).join('; '), details);
}

/** A 405 naming the methods the route takes, in its Allow header as RFC 9110 requires. */
export function methodNotAllowed(method: string, allowed: readonly string[], message = `${method} is not allowed here; use ${allowed.join(', ')}`): AppError {
  return new AppError('method_not_allowed', message, [], { Allow: allowed.join(', ') });
}

export function errorBody(err: AppError): ErrorBody {
  const s = STATUS[err.kind];
  return {
    error: {
      code: s.code,
      status: s.status,
      message: err.message,
      errors: err.details.length ? err.details : [{ reason: err.kind, message: err.message }],
    },
  };
}

// The part of autocannon 8's programmatic API the load chaos test uses (the package ships no types and
// @types/autocannon is not a dependency).
declare module 'autocannon' {
  namespace autocannon {
    interface Histogram {
      average: number;
      mean: number;
      stddev: number;
      min: number;
      max: number;
      total: number;
      p50: number;
      p90: number;
      p99: number;
    }

    interface RawRequest {
      method?: string;
      path?: string;
      headers?: Record<string, string>;
      body?: string;
    }

    interface RequestSpec extends RawRequest {
      /** Mutates the request before each send; returning a falsy value restarts the sequence. */
      setupRequest?: (request: RawRequest, context: Record<string, unknown>) => RawRequest;
    }

    interface Options {
      url: string;
      connections?: number;
      duration?: number;
      pipelining?: number;
      headers?: Record<string, string>;
      requests?: RequestSpec[];
      timeout?: number;
    }

    interface Result {
      requests: Histogram;
      latency: Histogram;
      throughput: Histogram;
      duration: number;
      errors: number;
      timeouts: number;
      non2xx: number;
      '2xx': number;
    }
  }

  function autocannon(options: autocannon.Options): Promise<autocannon.Result>;
  export = autocannon;
}

import pg from 'pg';
import { SQL } from '/work/wt/addr-pg/dist/src/store/postgres/statements.js';
const c = new pg.Client({ connectionString: 'postgres://postgres@127.0.0.1:5432/tq_scratch_addrpg' });
await c.connect();
const [name, ...vals] = process.argv.slice(2);
const values = vals.map((v) => (v === 'null' ? null : v));
for (let i = 0; i < 8; i++) {
  const t0 = performance.now();
  const r = await c.query({ name: 'p', text: SQL[name], values });
  console.log(i, (performance.now() - t0).toFixed(2), 'ms', r.rows.length);
}
await c.end();

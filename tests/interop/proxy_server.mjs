// An HTTP proxy (the `proxy` package from the npm registry) that asks for Basic credentials and logs the
// target of every CONNECT tunnel. Prints "listening on http://127.0.0.1:PORT" first.
//   node proxy_server.mjs USER PASSWORD
import http from 'node:http';
import { createProxy } from 'proxy';

const [user, password] = process.argv.slice(2);
const expected = 'Basic ' + Buffer.from(`${user}:${password}`).toString('base64');
const server = createProxy(http.createServer());
server.authenticate = (req) => {
  const ok = req.headers['proxy-authorization'] === expected;
  console.log(`${req.method} ${req.url} ${ok ? 'allowed' : 'refused'}`);
  return ok;
};
server.listen(0, '127.0.0.1', () => {
  console.log(`listening on http://127.0.0.1:${server.address().port}`);
});

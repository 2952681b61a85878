// oi's JavaScript kernel driver: runs cells in one persistent Node.js context.
//
// Protocol (see oi-kernels/src/kernel.rs): requests arrive as JSON lines on
// fd 3, replies leave as JSON lines on fd 4. After each cell a marker with a
// per-kernel token is written to stdout and stderr.
//
// Cells run as scripts in the main context, so variables, functions and
// `require`d modules persist. Top-level `let`/`const` become `var`, so a cell
// can be run again. A cell with top-level `await` runs inside an async
// function whose top-level declarations become global assignments. The
// value of a cell's last expression is echoed, as the Node REPL does. A run
// waits for the timers, I/O and child processes the cell started, so their
// output belongs to it.
(() => {
  'use strict';
  const fs = require('fs');
  const path = require('path');
  const util = require('util');
  const vm = require('vm');
  const Module = require('module');
  const readline = require('readline');

  const token = process.env.OI_KERNEL_TOKEN || '';
  delete process.env.OI_KERNEL_TOKEN;
  const outFd = fs.openSync('/dev/fd/1', 'w');
  const errFd = fs.openSync('/dev/fd/2', 'w');

  globalThis.require = Module.createRequire(path.join(process.cwd(), '<oi>.js'));
  globalThis.module = { exports: {} };
  globalThis.exports = globalThis.module.exports;
  globalThis.__filename = path.join(process.cwd(), '<oi>.js');
  globalThis.__dirname = process.cwd();

  function send(message) {
    fs.writeSync(4, JSON.stringify(message) + '\n');
  }

  // ── Rewriting top-level declarations ────────────────────────────────
  const IDENT = /[A-Za-z0-9_$]/;
  const REGEX_BEFORE = '(,=:[!&|?{};+-*%<>~^';
  const REGEX_AFTER_WORDS = new Set(['return', 'typeof', 'case', 'do', 'else', 'in', 'of', 'void', 'yield', 'await', 'delete', 'instanceof', 'new', 'throw']);

  // Yields [index, depth] for each code character outside strings,
  // comments, template text and regular expressions.
  function* codeChars(src) {
    let depth = 0;
    const templates = []; // depth at which each open `${` started
    let lastSignificant = '';
    let lastWord = '';
    let i = 0;
    const n = src.length;
    while (i < n) {
      const c = src[i];
      const next = src[i + 1];
      if (c === '/' && next === '/') { while (i < n && src[i] !== '\n') i++; continue; }
      if (c === '/' && next === '*') { i = src.indexOf('*/', i + 2); i = i < 0 ? n : i + 2; continue; }
      if (c === '"' || c === "'") {
        i++;
        while (i < n && src[i] !== c && src[i] !== '\n') { if (src[i] === '\\') i++; i++; }
        i++; lastSignificant = c; lastWord = ''; continue;
      }
      if (c === '`' || (c === '}' && templates.length && templates[templates.length - 1] === depth)) {
        if (c === '}') templates.pop();
        i++;
        while (i < n && src[i] !== '`') {
          if (src[i] === '\\') { i += 2; continue; }
          if (src[i] === '$' && src[i + 1] === '{') { templates.push(depth); i += 2; break; }
          i++;
        }
        if (src[i] === '`') i++;
        lastSignificant = '`'; lastWord = ''; continue;
      }
      if (c === '/' && (lastSignificant === '' || REGEX_BEFORE.includes(lastSignificant) || REGEX_AFTER_WORDS.has(lastWord))) {
        i++;
        let inClass = false;
        while (i < n && src[i] !== '\n') {
          if (src[i] === '\\') { i += 2; continue; }
          if (src[i] === '[') inClass = true;
          else if (src[i] === ']') inClass = false;
          else if (src[i] === '/' && !inClass) break;
          i++;
        }
        i++;
        while (i < n && /[a-z]/.test(src[i])) i++;
        lastSignificant = '/'; lastWord = ''; continue;
      }
      if (c === '(' || c === '[' || c === '{') depth++;
      yield [i, depth, c];
      if (c === ')' || c === ']' || c === '}') depth = Math.max(0, depth - 1);
      if (!/\s/.test(c)) {
        lastSignificant = c;
        if (IDENT.test(c)) {
          lastWord = IDENT.test(src[i - 1] || '') ? lastWord + c : c;
        } else {
          lastWord = '';
        }
      }
      i++;
    }
  }

  // The top-level word starting at `i`, if `i` starts one.
  function wordAt(src, i) {
    if (i > 0 && (IDENT.test(src[i - 1]) || src[i - 1] === '.')) return null;
    const m = /^[A-Za-z_$][A-Za-z0-9_$]*/.exec(src.slice(i, i + 40));
    return m ? m[0] : null;
  }

  // Top-level `let`/`const` → `var` (same length, so positions in error
  // messages stay right).
  function topLevelVar(src) {
    const out = src.split('');
    for (const [i, depth, c] of codeChars(src)) {
      if (depth !== 0 || !/[lc]/.test(c)) continue;
      const word = wordAt(src, i);
      if (word === 'let' && /\s/.test(src[i + 3] || '')) { out.splice(i, 3, 'v', 'a', 'r'); }
      else if (word === 'const' && /\s/.test(src[i + 5] || '')) { out.splice(i, 5, 'v', 'a', 'r', ' ', ' '); }
    }
    return out.join('');
  }

  // For a cell with top-level `await`: an async function in which top-level
  // declarations become assignments to globals, returning the value of the
  // last expression statement.
  function asyncCell(src) {
    let body = src.split('');
    let lastStatement = 0;
    for (const [i, depth, c] of codeChars(src)) {
      if (depth === 0 && (c === ';' || c === '}')) lastStatement = i + 1;
      if (depth !== 0) continue;
      const word = wordAt(src, i);
      if (word === 'let' || word === 'const' || word === 'var') {
        const after = src.slice(i + word.length).match(/^\s*([A-Za-z_$][A-Za-z0-9_$]*)/);
        if (after) { for (let k = 0; k < word.length; k++) body[i + k] = ' '; }
      } else if (word === 'function' || word === 'class') {
        const m = src.slice(i).match(/^(?:function\s*\*?|class)\s+([A-Za-z_$][A-Za-z0-9_$]*)/);
        if (m) body[i] = `globalThis.${m[1]} = ` + body[i];
      }
    }
    body = body.join('');
    // Which text is the last statement: after the last top-level `;` or `}`,
    // or after the last top-level line break before it.
    const tail = src.slice(lastStatement);
    const lines = tail.split('\n');
    let start = lastStatement;
    for (let k = 0; k < lines.length - 1; k++) {
      if (lines.slice(k + 1).join('\n').trim() !== '' && !/[,(\[{+\-*\/=&|?:.]\s*$/.test(lines[k])) {
        start += lines[k].length + 1;
      } else break;
    }
    const last = src.slice(start).trim().replace(/;\s*$/, '');
    const statementWords = /^(if|for|while|do|switch|try|throw|return|function|class|var|let|const|import|export|break|continue|\{|\/\/|\/\*)\b/;
    if (last && !statementWords.test(last)) {
      const before = body.slice(0, start);
      const lastInBody = body.slice(start).replace(/;\s*$/, '');
      body = `${before}return (${lastInBody.trim()}\n);`;
    }
    return `(async () => {\n${body}\n})()`;
  }

  // ── Running cells ────────────────────────────────────────────────────
  let running = false;
  let cellErrors = [];
  let interruptCell = null;
  let pendingInterrupt = false;

  function report(error) {
    let text;
    if (error && error.stack) {
      // Drop the driver's own frames.
      text = String(error.stack).split('\n').filter(l => !/node:vm|node:internal|\[eval\]|evalmachine/.test(l) || /<cell-/.test(l)).join('\n');
    } else {
      text = 'Uncaught ' + util.inspect(error);
    }
    fs.writeSync(errFd, text + '\n');
    const name = error && error.name ? error.name : 'Error';
    const message = error && error.message !== undefined ? error.message : util.inspect(error);
    return message ? `${name}: ${message}` : name;
  }

  process.on('uncaughtException', (error) => {
    const summary = report(error);
    if (running) cellErrors.push(summary);
  });
  process.on('unhandledRejection', (reason) => {
    const summary = report(reason instanceof Error ? reason : Object.assign(new Error('Unhandled promise rejection: ' + util.inspect(reason)), { stack: 'Unhandled promise rejection: ' + util.inspect(reason) }));
    if (running) cellErrors.push(summary);
  });
  // The driver runs with --no-warnings (to hide the notice that the module
  // loader it uses for `import()` is experimental); other warnings are shown.
  process.on('warning', (warning) => {
    if (!/USE_MAIN_CONTEXT_DEFAULT_LOADER/.test(String(warning && warning.message))) {
      fs.writeSync(errFd, `(node) ${warning.name}: ${warning.message}\n`);
    }
  });
  // SIGINT breaks synchronous code (`breakOnSigint`); a cell waiting on a
  // promise is stopped by an `interrupt` line naming it. A signal that lands
  // anywhere else is ignored: Node can deliver one late, after the cell it
  // was meant for has ended, and it must not stop the next one.
  process.on('SIGINT', () => {});
  let currentId = null;

  // Work a cell may start and whose end it waits for: timers, file and DNS
  // requests, connections being made, child processes. (Not open sockets
  // or servers: those may stay open for good.)
  const WAITED = new Set(['Timeout', 'Immediate', 'FSReqCallback', 'FSReqPromise', 'GetAddrInfoReqWrap', 'GetNameInfoReqWrap', 'QueryReqWrap', 'TCPConnectWrap', 'PipeConnectWrap', 'ProcessWrap', 'ShutdownWrap', 'ZlibWrap']);
  function resources() {
    const counts = new Map();
    for (const r of process.getActiveResourcesInfo()) {
      if (WAITED.has(r)) counts.set(r, (counts.get(r) || 0) + 1);
    }
    return counts;
  }
  // How much more work is pending than before the cell (whose own leftovers,
  // like an interval from an earlier cell, are not waited for).
  function pendingWork(before) {
    let pending = 0;
    for (const [r, c] of resources()) pending += Math.max(0, c - (before.get(r) || 0));
    return pending;
  }
  // Output is written synchronously, straight to the pipes: nothing waits in
  // a stream's buffer when a cell ends, and an interrupt cannot leave a
  // stream stuck mid-write (which can happen with Node's own pipe streams).
  function syncWriter(fd) {
    return function write(chunk, encoding, callback) {
      if (typeof encoding === 'function') {
        callback = encoding;
        encoding = undefined;
      }
      const data = typeof chunk === 'string' ? Buffer.from(chunk, encoding || 'utf8') : Buffer.from(chunk);
      let offset = 0;
      while (offset < data.length) offset += fs.writeSync(fd, data, offset);
      if (typeof callback === 'function') process.nextTick(callback);
      return true;
    };
  }
  process.stdout.write = syncWriter(outFd);
  process.stderr.write = syncWriter(errFd);

  async function runCell(id, code) {
    const filename = `<cell-${id}>`;
    const options = { filename, importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER };
    let script;
    let isAsync = false;
    try {
      script = new vm.Script(topLevelVar(code), options);
    } catch (error) {
      if (error instanceof SyntaxError && /await is only valid|Unexpected reserved word|Unexpected identifier/.test(error.message) && /\bawait\b/.test(code)) {
        try {
          script = new vm.Script(asyncCell(code), options);
          isAsync = true;
        } catch (error2) {
          return { status: 'error', error: report(error) };
        }
      } else {
        return { status: 'error', error: report(error) };
      }
    }
    cellErrors = [];
    const before = resources();
    running = true;
    const interrupted = new Promise((resolve) => { interruptCell = () => resolve('interrupted'); });
    try {
      if (pendingInterrupt) throw Object.assign(new Error('Script execution interrupted.'), { code: 'ERR_SCRIPT_EXECUTION_INTERRUPTED' });
      let value = script.runInThisContext({ breakOnSigint: true, displayErrors: false });
      if (isAsync) {
        const outcome = await Promise.race([value.then((v) => ({ v })), interrupted]);
        if (outcome === 'interrupted') return { status: 'interrupted' };
        value = outcome.v;
      }
      // Wait for the work the cell started (timers, I/O, child processes).
      while (pendingWork(before) > 0) {
        // An unref'd timer (not itself counted), then an immediate, so the
        // check runs outside any timer callback.
        const tick = new Promise((r) => setTimeout(() => setImmediate(r), 5).unref());
        const outcome = await Promise.race([tick, interrupted]);
        if (outcome === 'interrupted') return { status: 'interrupted' };
      }
      await new Promise((r) => setImmediate(r));
      if (value !== undefined) {
        fs.writeSync(outFd, util.inspect(value, { depth: 4, colors: false, maxArrayLength: 100 }) + '\n');
      }
      if (cellErrors.length) return { status: 'error', error: cellErrors[0] };
      return { status: 'ok' };
    } catch (error) {
      if (error && error.code === 'ERR_SCRIPT_EXECUTION_INTERRUPTED') {
        fs.writeSync(errFd, 'Interrupted\n');
        return { status: 'interrupted' };
      }
      return { status: 'error', error: report(error) };
    } finally {
      running = false;
      interruptCell = null;
    }
  }

  const input = readline.createInterface({ input: fs.createReadStream(null, { fd: 3 }), crlfDelay: Infinity });
  const queue = [];
  let busy = false;
  async function drain() {
    if (busy) return;
    busy = true;
    while (queue.length) {
      const line = queue.shift();
      let request;
      try { request = JSON.parse(line); } catch { continue; }
      if (request.type !== 'run') { process.exit(0); }
      pendingInterrupt = false;
      currentId = request.id;
      send({ type: 'started', id: request.id });
      const reply = await runCell(request.id, request.code);
      const marker = `\x1b]oi;${token};${request.id}\x07`;
      fs.writeSync(outFd, marker);
      fs.writeSync(errFd, marker);
      currentId = null;
      send(Object.assign(reply, { type: 'done', id: request.id }));
    }
    busy = false;
  }
  input.on('line', (line) => {
    let request = null;
    try { request = JSON.parse(line); } catch { /* queued, then skipped */ }
    if (request && request.type === 'interrupt') {
      if (request.id === currentId) {
        if (running && interruptCell) interruptCell();
        else pendingInterrupt = true;
      }
      return;
    }
    queue.push(line);
    drain();
  });
  input.on('close', () => process.exit(0));
  send({ type: 'ready', pid: process.pid });
})();

// oi's PHP kernel driver: runs cells with `eval` in the global scope, so
// variables, functions and classes persist. Protocol: JSON lines on fd 3
// (requests) and fd 4 (replies); after each cell a marker with a per-kernel
// token on stdout and stderr. Loaded with `php -r`, so no opening tag.
$__oi_token = getenv('OI_KERNEL_TOKEN') ?: '';
putenv('OI_KERNEL_TOKEN');
ini_set('display_errors', 'stderr');
error_reporting(E_ALL);
$__oi_in = fopen('php://fd/3', 'r');
$__oi_ctl = fopen('php://fd/4', 'w');
$__oi_out = fopen('php://fd/1', 'w');
$__oi_err = fopen('php://fd/2', 'w');
$__oi_running = false;
$__oi_pending = false;
if (function_exists('pcntl_async_signals')) {
    pcntl_async_signals(true);
    pcntl_signal(SIGINT, function () {
        global $__oi_running, $__oi_pending;
        if ($__oi_running) {
            throw new \RuntimeException('Interrupted', 130);
        }
        $__oi_pending = true;
    });
}
fwrite($__oi_ctl, json_encode(['type' => 'ready', 'pid' => getmypid()]) . "\n");
fflush($__oi_ctl);
while (($__oi_line = fgets($__oi_in)) !== false) {
    $__oi_request = json_decode($__oi_line, true);
    if (($__oi_request['type'] ?? '') !== 'run') {
        break;
    }
    $__oi_id = $__oi_request['id'];
    $__oi_pending = false;
    fwrite($__oi_ctl, json_encode(['type' => 'started', 'id' => $__oi_id]) . "\n");
    fflush($__oi_ctl);
    $__oi_reply = ['status' => 'ok'];
    try {
        $__oi_running = true;
        if ($__oi_pending) {
            throw new \RuntimeException('Interrupted', 130);
        }
        $__oi_code = preg_replace('/^\s*<\?php\b/', '', $__oi_request['code']);
        $__oi_code = preg_replace('/\?>\s*$/', '', $__oi_code);
        eval($__oi_code);
        $__oi_running = false;
    } catch (\Throwable $__oi_e) {
        $__oi_running = false;
        if ($__oi_e instanceof \RuntimeException && $__oi_e->getCode() === 130 && $__oi_e->getMessage() === 'Interrupted') {
            fwrite(STDERR, "Interrupted\n");
            $__oi_reply = ['status' => 'interrupted'];
        } else {
            $__oi_where = str_contains($__oi_e->getFile(), "eval()'d code") ? "<cell-$__oi_id>" : $__oi_e->getFile();
            $__oi_summary = get_class($__oi_e) . ': ' . $__oi_e->getMessage();
            fwrite(STDERR, "PHP $__oi_summary in $__oi_where:{$__oi_e->getLine()}\n");
            $__oi_reply = ['status' => 'error', 'error' => $__oi_summary];
        }
    }
    $__oi_running = false;
    fflush(STDOUT);
    fflush(STDERR);
    $__oi_marker = "\033]oi;$__oi_token;$__oi_id\007";
    fwrite($__oi_out, $__oi_marker);
    fflush($__oi_out);
    fwrite($__oi_err, $__oi_marker);
    fflush($__oi_err);
    fwrite($__oi_ctl, json_encode($__oi_reply + ['type' => 'done', 'id' => $__oi_id]) . "\n");
    fflush($__oi_ctl);
}

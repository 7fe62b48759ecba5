// The Python side of the sandbox: /adk/main.py inside it. It runs /adk/code.py in a fresh namespace, then reports
// on descriptor 3 (adk/sandbox/sandbox_report.hpp) the limit the code hit and the files it wrote in /work.
// Arguments: the most files to bring back, the most bytes of each.
#pragma once

namespace adk::sandbox_detail {

inline constexpr const char* sandbox_main_py = R"PY(import base64, errno, json, mimetypes, os, stat, sys, traceback

_report = os.fdopen(3, "w", buffering=1)
_pid = os.getpid()
_max_files = int(sys.argv[1])
_max_file_bytes = int(sys.argv[2])


def _say(**fields):
    _report.write(json.dumps(fields) + "\n")
    _report.flush()


def _files():
    found = {}
    for root, dirs, names in os.walk("."):
        dirs[:] = sorted(d for d in dirs if not os.path.islink(os.path.join(root, d)))
        for name in sorted(names):
            path = os.path.normpath(os.path.join(root, name))
            try:
                st = os.lstat(path)
            except OSError:
                continue
            if stat.S_ISREG(st.st_mode):
                found[path] = (st.st_size, st.st_mtime_ns)
    return found


_before = _files()
_say(started=True)
with open("/adk/code.py", encoding="utf-8", errors="replace") as f:
    _code = f.read()
_limit = None
_status = 0
try:
    exec(compile(_code, "code.py", "exec"), {"__name__": "__main__", "__builtins__": __builtins__})
except SystemExit as e:
    if e.code is None:
        _status = 0
    elif isinstance(e.code, int):
        _status = e.code
    else:
        print(e.code, file=sys.stderr)
        _status = 1
except BaseException as e:
    if isinstance(e, MemoryError):
        _limit = "memory"
    elif isinstance(e, OSError) and e.errno == errno.EAGAIN:
        _limit = "processes"
    traceback.print_exception(type(e), e, e.__traceback__.tb_next)
    _status = 1
if os.getpid() != _pid:
    os._exit(_status & 0xFF)  # a process the code forked: only the first one reports
try:
    sys.stdout.flush()
    sys.stderr.flush()
except Exception:
    pass
if _limit:
    _say(limit=_limit)
_count = 0
for _path, _signature in _files().items():
    if _before.get(_path) == _signature:
        continue
    if _count >= _max_files:
        _say(skipped=_path, reason="only %d files are brought back" % _max_files)
        continue
    if _signature[0] > _max_file_bytes:
        _say(skipped=_path, reason="it is over %d bytes" % _max_file_bytes)
        continue
    try:
        with open(_path, "rb") as f:
            _data = f.read(_max_file_bytes + 1)
    except OSError as e:
        _say(skipped=_path, reason=str(e))
        continue
    _mime = mimetypes.guess_type(_path)[0] or "application/octet-stream"
    _say(file=_path, inlineData={"mimeType": _mime, "data": base64.b64encode(_data).decode()})
    _count += 1
_say(exit=_status)
os._exit(0)
)PY";

}  // namespace adk::sandbox_detail

local token = os.getenv("OI_KERNEL_TOKEN") or "" -- (this line comes first: `lua -e` refuses an argument that starts with "-")
-- oi's Lua kernel driver: runs cells with `load` in the global environment,
-- so globals and loaded modules persist (locals live only in their cell).
-- As at the Lua prompt, a cell that is an expression has its value printed.
-- Requests on fd 3 are a line "ID NBYTES" followed by the code; replies are
-- JSON lines on fd 4; after each cell a marker with a per-kernel token goes
-- to stdout and stderr. The `lua` program turns SIGINT into an
-- "interrupted!" error in the running code, which ends the cell.
local requests = assert(io.open("/dev/fd/3", "rb"))
local replies = assert(io.open("/dev/fd/4", "wb"))
io.stdout:setvbuf("no")
io.stderr:setvbuf("no")

local function json_string(s)
  s = s:gsub('\\', '\\\\'):gsub('"', '\\"'):gsub('\n', '\\n'):gsub('\r', '\\r'):gsub('\t', '\\t')
  s = s:gsub('[%c]', ' ')
  return '"' .. s .. '"'
end

local function send(text)
  replies:write(text, "\n")
  replies:flush()
end

send(string.format('{"type":"ready","pid":%d}', 0))
while true do
  local header = requests:read("l")
  if not header then break end
  local id, size = header:match("^(%d+) (%d+)$")
  local code = ""
  if tonumber(size) > 0 then code = requests:read(tonumber(size)) or "" end
  send(string.format('{"type":"started","id":%s}', id))
  local name = "=<cell-" .. id .. ">"
  local chunk, problem = load("return " .. code, name, "t", _G)
  local is_expression = chunk ~= nil
  if not chunk then chunk, problem = load(code, name, "t", _G) end
  local status, error_text = "ok", nil
  if not chunk then
    io.stderr:write(problem, "\n")
    status, error_text = "error", "SyntaxError: " .. problem
  else
    local results = table.pack(xpcall(chunk, debug.traceback))
    if results[1] then
      if is_expression and results.n > 1 then
        local shown = {}
        for i = 2, results.n do shown[#shown + 1] = tostring(results[i]) end
        print(table.concat(shown, "\t"))
      end
    else
      local message = tostring(results[2])
      io.stderr:write(message, "\n")
      if message:match("^[^\n]*interrupted!") then
        status = "interrupted"
      else
        status, error_text = "error", (message:match("^[^\n]*"))
      end
    end
  end
  io.stdout:flush()
  io.stderr:flush()
  local marker = "\27]oi;" .. token .. ";" .. id .. "\7"
  io.stdout:write(marker)
  io.stderr:write(marker)
  local error_field = error_text and (',"error":' .. json_string(error_text)) or ""
  send(string.format('{"type":"done","id":%s,"status":"%s"%s}', id, status, error_field))
end

---@meta rpiv_todo.core
-- LuaCATS definitions of the native module `rpiv_todo.core` (lua/rpiv_todo/core.so), for
-- lua-language-server. Nothing here runs: `---@meta rpiv_todo.core` makes the server read
-- this file for `require("rpiv_todo.core")`. Not embedded by build.rs (see meta/).

---@helptext rpiv_todo-files
---The same from Lua, for any host (each returns `nil, err, kind` on failure, with a
---message naming the path and what is wrong, and never raises for a bad file or an
---unwritable path):

---@helptext rpiv_todo-file-format
--- The file is the snapshot the tool returns, with a format version:
--- `{"version":1,"tasks":[...],"nextId":N}`. A bare `{"tasks":[...],"nextId":N}`
--- (copied out of a tool result) loads too; a higher version is refused.

---@helptext rpiv_todo-file-rules verbatim
--- Files that are not what they should be. Every file rpiv_todo reads (a list,
--- rpiv-i18n's locale.json) is read the same way:
--- - Only a plain file is opened. A directory, a pipe (FIFO), a terminal or a
---   device where the file belongs is refused unopened, so nothing waits on it:
---   a FIFO at locale.json is passed over and the locale chain goes on.
--- - A file larger than its limit is refused from its size, unread: 64 MiB for
---   a list, 1 MiB for locale.json (the same limit for reading it and for
---   merging a choice into it, so a saved choice is always read back).
--- - The third result of a failed `core.load` or `core.save` says what kind of
---   failure it was: "missing" (no file, a dangling link too), "not_file",
---   "too_large", "io" (the system refused or failed: permissions, too many
---   open files, a full disk; a later try may pass), "newer" (a format of a
---   newer rpiv_todo: never moved aside or written over) or "invalid" (read,
---   but not a list). It comes from the system's error, never from the message.
--- - A symbolic link is written through: its target is replaced and the link
---   stays, also when the target does not exist yet (a dotfiles link); a loop
---   of links is refused and nothing is replaced.
--- - A failed save's message never names the temporary file, so a full disk
---   gives one message, reported once.
--- - What a tool call may add is bounded, so every list the tool acknowledged
---   loads back: `subject`, `activeForm`, `owner` at most 2048 bytes each (as
---   JSON text), `description` 32768, a task's `metadata` 8192, and 1000 ids in
---   `blockedBy`. A call over a bound is refused in-band naming the field.

---A tool result, as the model and the host's persistence see it.
---@class rpiv_todo.Result
---@field content { type: "text", text: string }[] one text part: what the model reads
---@field details rpiv_todo.Details the full post-call snapshot (the persistence format)

---@class rpiv_todo.Details
---@field action any the call's `action`, echoed
---@field params table|string the call's arguments, echoed verbatim (the caller's own table)
---@field tasks rpiv_todo.Task[]
---@field nextId integer
---@field error? string the bare message of a rejected call

---@class rpiv_todo.Layout
---@field visible rpiv_todo.Task[] the rows to draw, in list order
---@field hiddenCompleted integer completed tasks left out
---@field truncatedTail integer unfinished tasks cut from the end
---@field counts { total: integer, pending: integer, inProgress: integer, completed: integer }
---@field showIds boolean some shown task waits on another

---A list held in Rust: the fast path hosts and sessions use.
---@class rpiv_todo.List
local List = {}

---One tool call; bad arguments come back in-band (`details.error`), never as a Lua error.
---On a list bound to a file (`bind`) a call that may change the list is one transaction:
---applied to the newest list in the file, under its lock, answered once saved; a failure
---to read, lock or save is an in-band error and the list stays as it was.
---{by} names the call's writer ("user" for the user's own edits; nil: the list's default,
---see `set_writer`). What a call changes is recorded with its writer, and a writer's reply
---ends with one line naming what the others changed since its last call, e.g.
---`(Changed by others since your last call: #2 completed by the user.)`; with no other
---writer's change the reply is exactly the tool's.
---@param params table|string the tool arguments as a table, or the JSON text the LLM API delivered
---@param by? string the writer's name, 1 to 64 bytes
---@return rpiv_todo.Result
function List:apply(params, by) end

---One tool call from JSON text to JSON text; nothing is converted to Lua tables.
---@param params_json string
---@param by? string the writer's name (see `apply`)
---@return string result_json
function List:apply_json(params_json, by) end

---Name the writer of calls that give none (`apply(params)`): an agent's name ("codex",
---"codecompanion"), or nil ("another program" in the others' notes).
---@param name string|nil
function List:set_writer(name) end

---What the other writers changed since {by}'s last call, as the line a reply would end
---with, or nil; {by} is then up to date. For a host that tells the model before its next
---call (a bound list reads the file first).
---@param by? string the writer's name (nil: the default writer)
---@return string|nil note
function List:changes(by) end

---The list as a snapshot of fresh tables.
---@return rpiv_todo.State
function List:state() end

---The list as JSON text `{"tasks":[...],"nextId":n}`.
---@return string
function List:state_json() end

---Replace the list; a malformed snapshot raises a Lua error naming the field. On a bound
---list the file is written too (the host's list wins): true, or nil, the error and its kind.
---@param state rpiv_todo.State|string|rpiv_todo.List|nil
---@return true|nil ok
---@return string|nil err
---@return string|nil kind
function List:replace(state) end

---@return integer
function List:next_id() end

---Keep the list in the file at {path}, shared with other processes: every call that may
---change it becomes a transaction on the file (see `apply`). Nothing is read or written
---now. {opts}.wait_ms: how long a call waits for another process's lock (default 100, at
---most 60000). `bind(nil)` stops.
---@param path string|nil
---@param opts? { wait_ms?: number }
function List:bind(path, opts) end

---Take in another process's change to the bound file; the file is parsed only when its
---generation moved. "unchanged", "reloaded", "missing" (the list stays), or nil, the
---error and its kind ("not_file", "too_large", "io", "newer", "invalid", "unbound").
---@return string|nil what
---@return string|nil err
---@return string|nil kind
function List:sync() end

---Write the list over the bound file whatever list it holds (a file that is not a list is
---moved aside first): true, or nil, the error and its kind.
---@return true|nil ok
---@return string|nil err
---@return string|nil kind
function List:write() end

---Stop keeping the list in its file; with {remove}, the file goes too when it still holds
---what this list last read or wrote. True when removed.
---@param remove? boolean
---@return boolean|nil removed
---@return string|nil err
---@return string|nil kind
function List:unbind(remove) end

---What happened to the bound file that no call returned (a file moved aside, a failed
---save), since the last time this was called.
---@return string[]
function List:notices() end

---The bound file and the generation this list last read or wrote, or nil.
---@return string|nil path
---@return integer|nil generation
function List:file() end

---@class rpiv_todo.core
---@field version string the crate version; the Lua scripts refuse a core of another version
---@field flavour "lua54"|"lua51"|"luajit" the Lua this build links against
---@field null lightuserdata JSON null (the same value as `cjson.null`); `vim.NIL` is accepted too
---@field array_mt table metatable on empty arrays in results (`{ __jsontype = "array" }` or `cjson.array_mt`)
local core = {}

---The pure reducer: state in, state out. On a rejected call `state2` is `state` itself.
---@param state rpiv_todo.State|string|nil nil for the empty list
---@param params table|string
---@return rpiv_todo.Result result
---@return rpiv_todo.State state2
function core.apply(state, params) end

---@param state? rpiv_todo.State|string
---@return rpiv_todo.List
function core.list(state) end

---A call in the strict form (OpenAI strict mode: null for "not given", metadata as JSON
---text) converted to the normal form with serde_json. Without `list`: the normal-form call
---as a table, or nil and the error (metadata text that is not a JSON object); arguments it
---cannot read come back as given. With a list: the call runs on it through `list:apply`
---(the normal checks and envelope), a bad metadata text answered in-band, list unchanged.
---@param params table|string the call's arguments, as a table or a JSON string
---@param list? rpiv_todo.List
---@return any params_or_result
---@return string|nil err
function core.from_strict(params, list) end

---Rebuild a list from branch entries: the last todo tool result with a snapshot wins.
---@param entries table[]|string an array of entries, or its JSON text
---@return rpiv_todo.State
function core.replay(entries) end

---The list as a Markdown checklist, one line per task that is not deleted:
---`- [ ] #3 Write the parser ⛓ #1` (`[ ]` pending, `[/]` in progress, `[x]` completed,
---`⛓` what it waits for), its activeForm (`  > ...`) and description indented under it.
---What `:Todos edit` and `:Todos export` show.
---@param list userdata|rpiv_todo.State|string a list handle, a state or its JSON text
---@return string markdown
function core.markdown(list) end

---The calls that turn {base} into what the checklist {text} shows: a line without an id
---a create (with `then_status` for a box other than `[ ]`), a changed box, subject,
---activeForm, description or `⛓` an update, a line removed a delete; `errors` the lines
---refused, with their number (0 for a removed line) and why. A line about a task that
---differs between {base} and {current} (another writer changed it) is refused, never
---written over. With {base} nil, an import: every item a create, its `#n` kept as
---`reference` for the `blockedBy` of the others.
---@param text string
---@param base? userdata|rpiv_todo.State|string the list the checklist was made from
---@param current? userdata|rpiv_todo.State|string the list now (default: {base})
---@return { steps: { line: integer, params: table, then_status?: string, reference?: integer }[], errors: { line: integer, message: string }[] }
function core.markdown_plan(text, base, current) end

---Is {branch} (a compacted branch's list) a reason to replace {held}? True when it is the
---same list, or when tool calls can turn {held} into it and none can turn it back (the
---status machine's transitions, `Status::can_move_to`); false for an older list or one
---that could be either (only pending ⇄ in_progress and texts differ).
---@param held userdata|rpiv_todo.State|string a list handle (read in place), a state or its JSON text
---@param branch rpiv_todo.State|string
---@return boolean
function core.newer(held, branch) end

---Strip terminal escapes, controls and bidi marks from model-written text.
---@param text string
---@return string
function core.sanitize(text) end

---`core.sanitize`, and U+061C (ARABIC LETTER MARK) dropped too: for what people see
---(the overlay, `/todos`). `core.sanitize` keeps the original's exact behaviour.
---@param text string
---@return string
function core.sanitize_display(text) end

---Terminal columns of `text` (escape sequences 0, wide characters and emoji 2).
---@param text string
---@return integer
function core.width(text) end

---Cut `text` to `width` columns, ending with `ellipsis` (default "…") when cut.
---@param text string
---@param width integer
---@param ellipsis? string
---@return string
function core.truncate(text, width, ellipsis) end

---The SHA-256 of `data`, as 64 lowercase hex digits.
---@param data string
---@return string
function core.sha256(data) end

---What every list file name of `key` starts with: `<key part>@` (see `core.file_name`).
---@param key string
---@return string
function core.key_prefix(key) end

---The name of session `id`'s list file under `key` (the working directory), the one
---`rpiv_todo.persist` and the MCP server share: `<key part>@<id part>.json`, each part its
---text with every byte outside `[A-Za-z0-9._-]` as `%XX`, or `~` and its SHA-256 when
---longer than 120 (key) or 64 (id) bytes once escaped.
---@param key string
---@param id string
---@return string
function core.file_name(key, id) end

---Read a name `core.file_name` wrote: its key part, its id part and the session id (nil
---when hashed); nil for any other name (temporary files, files moved aside).
---@param name string
---@return string|nil key_part
---@return string|nil id_part
---@return string|nil id
function core.parse_name(name) end

---What a live overlay remembers of what a person saw (completed ids shown this turn and
---in earlier turns); `overlay.new()` keeps one.
---@class rpiv_todo.OverlayLive
local OverlayLive = {}
function OverlayLive:reset() end
function OverlayLive:turn_started() end
---@return integer[] ids hidden after their turn, sorted
function OverlayLive:hidden() end
---@return integer[] ids shown during the current turn, sorted
function OverlayLive:shown() end

---@return rpiv_todo.OverlayLive
function core.overlay_live() end

---Everything the overlay's layout needs, decided in one call: the rows (row views from a
---list handle; the caller's own task tables from a state), the heading counts, whether
---rows carry `#id`, and what the `+N more` summary counts. With an `overlay_live`, the
---tasks seen in an earlier turn are left out and, unless `collapsed`, the completed tasks
---drawn now are remembered. Read the rows, never change them: from a list handle with
---no `live` and no `with_tasks`, the same row tables come back while the list is
---unchanged (a panel repainted on a scroll or a resize builds nothing again).
---@param source rpiv_todo.List|rpiv_todo.State|nil
---@param budget integer rows under the heading
---@param live? rpiv_todo.OverlayLive|table<integer, boolean> a live memory, or ids to leave out
---@param collapsed? boolean
---@param with_tasks? boolean list handles: each row view also carries the whole `task`
---@return table[] rows
---@return { total: integer, pending: integer, in_progress: integer, completed: integer } counts
---@return boolean show_ids
---@return integer hidden_completed
---@return integer truncated_tail
---@return integer longest list handles: no row view's `subject` or `activeForm` has more bytes (else 0)
function core.overlay_view(source, budget, live, collapsed, with_tasks) end

---A UI string in `locale` (falls back pt-BR -> pt -> en); counts go in as numbers.
---@param locale string
---@param id string
---@param args? table<string, string|number>
---@return string
function core.tr(locale, id, args) end

---The locale chain: explicit, RPIV_TODO_LOCALE, rpiv-i18n/locale.json, LC_ALL, LC_MESSAGES, LANG, "en".
---@param explicit? string
---@param env? table<string, string|false> overrides of environment variables (false: unset)
---@return string
function core.resolve_locale(explicit, env) end

---@return string[] the nine locale codes
function core.locales() end

---True, or nil and the error (naming the path and what went wrong): write a list handle,
---a `{ tasks, nextId }` table or its JSON text to {path}, atomically: a temporary file
---beside it, synced, renamed over it. The file is
---`{"version":1,"tasks":[...],"nextId":n}`. The directory must exist.
---@param path string
---@param list_or_state rpiv_todo.List|rpiv_todo.State|string a list handle, a snapshot or its JSON text
---@return true|nil ok
---@return string|nil err the path and what went wrong (never the temporary file's name)
---@return rpiv_todo.FileFailure|nil kind
function core.save(path, list_or_state) end

---The state table, or nil and the error: missing, unreadable, empty, truncated or
---invalid JSON, not a list, a list that breaks the rules `core.list` keeps (an id twice,
---a cycle, a dangling blockedBy), written by a newer version. Reads what `core.save`
---writes, or a bare `{ tasks, nextId }` snapshot. A nextId not past every id is repaired,
---as `core.list` does. Only a plain file is opened: a directory, a pipe, a terminal or a
---device at {path} is refused unopened, and a file over 64 MiB is refused from its size,
---unread. The third value names the kind of failure: "missing", "not_file", "too_large",
---"io", "newer" or "invalid" (|rpiv_todo-persist| moves only an "invalid" file aside).
---@param path string
---@return rpiv_todo.State|nil state
---@return string|nil err the path and what is wrong: missing, unreadable, empty, truncated, not a list, breaks the list's rules
---@return rpiv_todo.FileFailure|nil kind what kind of failure, decided from the system's error or the check that refused, never from the message
function core.load(path) end

---@alias rpiv_todo.FileFailure
---| "missing"   # no file at the path (a dangling symbolic link too)
---| "not_file"  # a directory, a pipe, a terminal, a device: not opened
---| "too_large" # over the limit (64 MiB for a list, 1 MiB for locale.json): not read
---| "io"        # the system refused or failed (permissions, EMFILE, EIO, a full disk): may pass
---| "newer"     # written by a newer rpiv_todo in a format this one does not read: left as it is
---| "invalid"   # read, but not what it should be (not JSON, not a list, breaks its rules)

---Set `"locale": code` in rpiv-i18n's locale.json at `path`, keeping its other keys;
---atomic; creates the file and its directory. An unknown code writes nothing.
---@param path string
---@param code string one of core.locales()
---@return true|nil ok
---@return string|nil err
---@return rpiv_todo.FileFailure|nil kind
function core.save_locale(path, code) end

---Where rpiv-i18n's locale.json is: $XDG_CONFIG_HOME/rpiv-i18n/locale.json, else under
---$HOME/.config; nil when neither is set.
---@param env? table<string, string|false> overrides of environment variables (false: unset)
---@return string|nil
function core.locale_file(env) end

return core

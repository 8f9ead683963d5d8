/* bench/floor/floor.c -- the least a native copy of a replayed snapshot can cost through
 * the C API (scripts/bench.sh --floor). Not part of the module: two copies of an array of
 * flat task tables, table to table, the way src/lua/raw/snapshot.rs copies them:
 *
 *   floor.copy(tasks)     lua_next over each task, every pair set in the new table: the
 *                         calls a copy needs, and no check at all (a blockedBy array is
 *                         shared, not copied);
 *   floor.checked(tasks)  the same, with the reads any check needs: each task's type, each
 *                         key's type and bytes, each string value's bytes.
 *
 * Nothing is validated: it is a yardstick, not a reader. */
#include <stddef.h>
#include "lua.h"
#include "lauxlib.h"

/* The tasks at 1 copied table to table; with `check`, also the reads any check needs. */
static int copy_tasks(lua_State *L, int check) {
  size_t n = lua_objlen(L, 1), i, len;
  lua_settop(L, 1);
  lua_createtable(L, (int)n, 0);
  for (i = 1; i <= n; i++) {
    lua_rawgeti(L, 1, (int)i); /* the task, at 3 */
    if (check && lua_type(L, 3) != LUA_TTABLE) return 0;
    lua_createtable(L, 0, 4);  /* its copy, at 4 */
    lua_pushnil(L);
    while (lua_next(L, 3)) {   /* key at 5, value at 6 */
      if (check) {
        if (lua_type(L, 5) != LUA_TSTRING) return 0;
        (void)lua_tolstring(L, 5, &len);
        if (lua_type(L, 6) == LUA_TSTRING) (void)lua_tolstring(L, 6, &len);
      }
      lua_pushvalue(L, 5);
      lua_insert(L, 6);
      lua_rawset(L, 4);
    }
    lua_rawseti(L, 2, (int)i);
    lua_settop(L, 2);
  }
  return 1;
}

static int floor_copy(lua_State *L) { return copy_tasks(L, 0); }

static int floor_checked(lua_State *L) { return copy_tasks(L, 1); }

int luaopen_floor(lua_State *L) {
  lua_createtable(L, 0, 2);
  lua_pushcfunction(L, floor_copy);
  lua_setfield(L, -2, "copy");
  lua_pushcfunction(L, floor_checked);
  lua_setfield(L, -2, "checked");
  return 1;
}

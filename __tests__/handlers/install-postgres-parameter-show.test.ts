// SHOW's words for a file's value (parameter-show.ts), against what PostgreSQL 15.18 printed for the same text
// (SET LOCAL, then SHOW), or undefined where it refused the value or printed a hidden alias' own name (not sure).
// Strings are taken as written: a server's own form (DateStyle) is caught against the running value instead.
import { type SettingType, showValue } from "../../handlers/install-postgres/parameter-show";

/** pg_settings' vartype, unit, enumvals and range of each parameter, as PostgreSQL 15 has them. */
const TYPES: Record<string, SettingType> = {
  work_mem: { vartype: "integer", unit: "kB", min_val: "64", max_val: "2147483647" },
  temp_buffers: { vartype: "integer", unit: "8kB", min_val: "100", max_val: "1073741823" },
  statement_timeout: { vartype: "integer", unit: "ms", min_val: "0", max_val: "2147483647" },
  log_min_duration_statement: { vartype: "integer", unit: "ms", min_val: "-1", max_val: "2147483647" },
  vacuum_cost_delay: { vartype: "real", unit: "ms", min_val: "0", max_val: "100" },
  cursor_tuple_fraction: { vartype: "real", min_val: "0", max_val: "1" },
  seq_page_cost: { vartype: "real", min_val: "0", max_val: "1.79769e+308" },
  enable_seqscan: { vartype: "bool" },
  bytea_output: { vartype: "enum", enumvals: ["escape", "hex"] },
  client_min_messages: {
    vartype: "enum",
    enumvals: ["debug5", "debug4", "debug3", "debug2", "debug1", "log", "notice", "warning", "error"],
  },
  effective_cache_size: { vartype: "integer", unit: "8kB", min_val: "1", max_val: "2147483647" },
  maintenance_work_mem: { vartype: "integer", unit: "kB", min_val: "1024", max_val: "2147483647" },
  log_temp_files: { vartype: "integer", unit: "kB", min_val: "-1", max_val: "2147483647" },
  idle_in_transaction_session_timeout: { vartype: "integer", unit: "ms", min_val: "0", max_val: "2147483647" },
};

/** [parameter, the text as written, SHOW's words (null: refused, or a hidden alias: not sure)]. */
const SEEN: [string, string, string | null][] = [
  ["work_mem", "64MB", "64MB"],
  ["work_mem", "65536kB", "64MB"],
  ["work_mem", "65537", "65537kB"],
  ["work_mem", "1GB", "1GB"],
  ["work_mem", "1.5GB", "1536MB"],
  ["work_mem", "0.5MB", "512kB"],
  ["work_mem", "1024", "1MB"],
  ["work_mem", "4096kB", "4MB"],
  ["work_mem", "2TB", null],
  ["work_mem", "0x400", "1MB"],
  ["work_mem", "010", null],
  ["work_mem", "1e3", "1000kB"],
  ["work_mem", "1536kB", "1536kB"],
  ["work_mem", " 8 MB ", "8MB"],
  ["work_mem", "100000", "100000kB"],
  ["temp_buffers", "1024", "8MB"],
  ["temp_buffers", "800kB", "800kB"],
  ["temp_buffers", "100", "800kB"],
  ["temp_buffers", "8MB", "8MB"],
  ["temp_buffers", "1000", "8000kB"],
  ["temp_buffers", "12345", "98760kB"],
  ["statement_timeout", "0", "0"],
  ["statement_timeout", "30s", "30s"],
  ["statement_timeout", "512", "512ms"],
  ["statement_timeout", "1000", "1s"],
  ["statement_timeout", "90000", "90s"],
  ["statement_timeout", "1.5s", "1500ms"],
  ["statement_timeout", "3600000", "1h"],
  ["statement_timeout", "86400000", "1d"],
  ["statement_timeout", "1min", "1min"],
  ["statement_timeout", "250ms", "250ms"],
  ["statement_timeout", "1500us", "2ms"],
  ["statement_timeout", "100us", "0"],
  ["statement_timeout", "1h", "1h"],
  ["log_min_duration_statement", "-1", "-1"],
  ["log_min_duration_statement", "250", "250ms"],
  ["log_min_duration_statement", "1000", "1s"],
  ["log_min_duration_statement", "60000", "1min"],
  ["vacuum_cost_delay", "0", "0"],
  ["vacuum_cost_delay", "2", "2ms"],
  ["vacuum_cost_delay", "2.5", "2500us"],
  ["vacuum_cost_delay", "20ms", "20ms"],
  ["vacuum_cost_delay", "1s", null],
  ["vacuum_cost_delay", "100us", "100us"],
  ["vacuum_cost_delay", "0.5", "500us"],
  ["cursor_tuple_fraction", "0.1", "0.1"],
  ["cursor_tuple_fraction", "1", "1"],
  ["cursor_tuple_fraction", "0.123456789", "0.123457"],
  ["cursor_tuple_fraction", "1e-5", "1e-05"],
  ["seq_page_cost", "1", "1"],
  ["seq_page_cost", "1.5", "1.5"],
  ["seq_page_cost", "1e7", "1e+07"],
  ["seq_page_cost", "1000000", "1e+06"],
  ["seq_page_cost", "123456.7", "123457"],
  ["enable_seqscan", "on", "on"],
  ["enable_seqscan", "off", "off"],
  ["enable_seqscan", "true", "on"],
  ["enable_seqscan", "FALSE", "off"],
  ["enable_seqscan", "yes", "on"],
  ["enable_seqscan", "n", "off"],
  ["enable_seqscan", "1", "on"],
  ["enable_seqscan", "0", "off"],
  ["enable_seqscan", "of", "off"],
  ["enable_seqscan", "t", "on"],
  ["bytea_output", "hex", "hex"],
  ["bytea_output", "ESCAPE", "escape"],
  ["client_min_messages", "notice", "notice"],
  ["client_min_messages", "WARNING", "warning"],
  ["client_min_messages", "debug", null],
  ["effective_cache_size", "4GB", "4GB"],
  ["effective_cache_size", "524288", "4GB"],
  ["effective_cache_size", "1000", "8000kB"],
  ["effective_cache_size", "100", "800kB"],
  ["maintenance_work_mem", "64MB", "64MB"],
  ["maintenance_work_mem", "1048576", "1GB"],
  ["log_temp_files", "-1", "-1"],
  ["log_temp_files", "0", "0"],
  ["log_temp_files", "1024", "1MB"],
  ["log_temp_files", "10MB", "10MB"],
  ["idle_in_transaction_session_timeout", "0", "0"],
  ["idle_in_transaction_session_timeout", "60000", "1min"],
  ["idle_in_transaction_session_timeout", "10min", "10min"],
  ["idle_in_transaction_session_timeout", "1d", "1d"],
  ["idle_in_transaction_session_timeout", "25h", "25h"],
];

describe("a file's value in SHOW's words", () => {
  it.each(SEEN)("%s = '%s' shows as %s", (name, text, shown) => {
    expect(showValue(text, TYPES[name])).toBe(shown ?? undefined);
  });

  it("a type it does not know, a string as written", () => {
    expect(showValue("64MB", {})).toBeUndefined();
    expect(showValue("%m [%p] ", { vartype: "string" })).toBe("%m [%p] ");
  });
});

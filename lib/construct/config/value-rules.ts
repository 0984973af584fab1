// Value rules several of the stack's settings share (names, URLs, non-empty text).
import { string } from "../../shared/validate";

/** Stack, vApp and VM names: they become Terraform resource names and job names. */
export const NAME = /^[a-z][a-z0-9-]{0,30}$/;
export const name = string({ pattern: NAME, allowed: "a lowercase letter, then lowercase letters, digits or -" });
export const nonEmpty = string({ pattern: /\S/, allowed: "a non-empty string" });
export const url = string({ pattern: /^https?:\/\/[^\s"'`$\\]+$/, allowed: "an http(s) URL" });

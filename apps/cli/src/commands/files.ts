/** `refvid files upload|delete`: reference uploads, to use in any run's --image, --video or --audio. */
import type { FileUpload } from "@refvid/client";
import type { Command } from "commander";
import { details } from "../format.js";
import type { Colors } from "../io.js";
import { checkLocalFiles, formatSize, uploadLocalFile } from "../local-files.js";
import { session } from "../session.js";

function uploadDetails(c: Colors, upload: FileUpload): string {
  return details(c, [
    ["file", upload.file_id],
    ["url", upload.url],
    ["type", upload.content_type],
    ["size", `${formatSize(upload.bytes)} (${upload.bytes} bytes)`],
    ["name", upload.file_name],
    ["expires", upload.expires_at],
  ]);
}

export function registerFiles(program: Command): void {
  const files = program
    .command("files")
    .summary("upload reference files, delete uploads")
    .description(
      "Reference uploads: an image, video or audio file stored for your organization, whose URL works " +
        "in any run's --image, --video or --audio (or *_urls field) with a key of the same organization " +
        "and environment, until it expires (24 hours unless the server says otherwise). `refvid run` " +
        "uploads a local file given as a reference by itself.",
    );

  files
    .command("upload")
    .description(
      "Upload files (POST /v1/files, streamed from disk) and print each upload: its id, URL, the type " +
        "found in its bytes, and when it expires. With --json, the upload (a list for several files).",
    )
    .argument("<path...>", "the files: images (JPEG, PNG, WebP, …), videos (MP4, MOV) or audio (MP3, WAV)")
    .addHelpText(
      "after",
      "\nExample:\n  refvid files upload ./sculpture.png ./melody.mp3\n" +
        '  refvid run model-a --prompt p --image "$(refvid files upload ./a.png --json | jq -r .url)"',
    )
    .action(async (paths: string[], _options: unknown, command: Command) => {
      const { io, client: connect } = await session(command);
      const client = connect();
      // Every file is checked before the first is sent.
      await checkLocalFiles(paths.map((path) => ({ path, flag: "" })));
      const uploads: FileUpload[] = [];
      for (const path of paths) uploads.push(await uploadLocalFile(client, { path, flag: "" }, io));
      if (io.json) return io.printJson(uploads.length === 1 ? uploads[0] : uploads);
      io.print(uploads.map((upload) => uploadDetails(io.c, upload)).join("\n\n"));
    });

  files
    .command("delete")
    .description("Delete an upload before it expires. Runs already submitted with it may fail to read it.")
    .argument("<file_id>", "the upload's id (upload_…)")
    .action(async (fileId: string, _options: unknown, command: Command) => {
      const { io, client } = await session(command);
      const deleted = await client().deleteUpload(fileId);
      if (io.json) return io.printJson(deleted);
      io.print(`Deleted ${deleted.file_id}.`);
    });
}

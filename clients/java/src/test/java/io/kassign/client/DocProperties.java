package io.kassign.client;

import java.io.IOException;
import java.io.StringReader;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;

/**
 * A {@code properties} block of a page under docs/, found by its first line ({@code # NAME}), as
 * the map Kafka hands a plug-in's configure(): so a worked example is tested as written. The
 * broker plug-ins' tests use it too, through this module's tests jar.
 */
public final class DocProperties {
    private DocProperties() {
    }

    /** The block of {@code docs/PAGE} whose first line is {@code # NAME}. */
    public static Map<String, Object> block(final String page, final String name) {
        final List<String> lines;
        try {
            lines = Files.readAllLines(docs().resolve(page));
        } catch (final IOException e) {
            throw new UncheckedIOException(e);
        }
        for (int i = 0; i + 1 < lines.size(); i++) {
            if (lines.get(i).equals("```properties") && lines.get(i + 1).equals("# " + name)) {
                final StringBuilder text = new StringBuilder();
                for (int j = i + 2; j < lines.size() && !lines.get(j).equals("```"); j++) {
                    text.append(lines.get(j)).append('\n');
                }
                final Properties properties = new Properties();
                try {
                    properties.load(new StringReader(text.toString()));
                } catch (final IOException e) {
                    throw new UncheckedIOException(e);
                }
                final Map<String, Object> configs = new HashMap<>();
                properties.stringPropertyNames().forEach(key -> configs.put(key, properties.getProperty(key)));
                return configs;
            }
        }
        throw new IllegalStateException("docs/" + page + " has no properties block '# " + name + "'");
    }

    /** The repository's docs/, above the module directory Maven runs the tests in. */
    private static Path docs() {
        for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
            if (Files.isDirectory(dir.resolve("docs")) && Files.isDirectory(dir.resolve("clients"))) {
                return dir.resolve("docs");
            }
        }
        throw new IllegalStateException("no docs/ above " + Path.of("").toAbsolutePath());
    }
}

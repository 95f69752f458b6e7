package io.kassign.client;

import io.kassign.v1.AssignResponse;
import io.kassign.v1.AssignmentReport;
import io.kassign.v1.ClientAssignment;
import io.kassign.v1.TaskId;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

/** Renders an {@link AssignResponse} as the plain-text table an operator reads: one row per client. */
public final class AssignmentTable {
    private static final String[] HEADER = {"PROCESS", "ACTIVE", "STANDBY", "FOLLOW-UP"};

    private AssignmentTable() {
    }

    public static String render(final AssignResponse response) {
        final List<String[]> rows = new ArrayList<>();
        rows.add(HEADER);
        for (final ClientAssignment client : response.getClientsList()) {
            rows.add(new String[] {
                client.getProcessId(),
                tasks(client.getActiveTasksList()),
                tasks(client.getStandbyTasksList()),
                deadline(client.getFollowupRebalanceDeadlineMs()),
            });
        }
        final int[] widths = new int[HEADER.length];
        for (final String[] row : rows) {
            for (int i = 0; i < row.length; i++) {
                widths[i] = Math.max(widths[i], row[i].length());
            }
        }
        final StringBuilder out = new StringBuilder();
        for (final String[] row : rows) {
            for (int i = 0; i < row.length; i++) {
                out.append(i == row.length - 1 ? row[i] : pad(row[i], widths[i] + 2));
            }
            out.append('\n');
        }
        out.append(summary(response)).append('\n');
        return out.toString();
    }

    private static String summary(final AssignResponse response) {
        final AssignmentReport report = response.getReport();
        return String.format("error: %s  assignor: %s  tasks: %d  clients: %d  moved actives: %d  warm-ups: %d",
                response.getError().name().replace("ASSIGNMENT_ERROR_", ""), report.getAssignor(),
                report.getTasks(), report.getClients(), report.getActiveTasksMoved(), report.getWarmups());
    }

    private static String tasks(final List<TaskId> tasks) {
        return tasks.isEmpty() ? "-" : tasks.stream().map(TaskIds::format).collect(Collectors.joining(","));
    }

    private static String deadline(final long epochMillis) {
        return epochMillis == 0 ? "-" : Instant.ofEpochMilli(epochMillis).toString();
    }

    private static String pad(final String text, final int width) {
        return text + " ".repeat(width - text.length());
    }
}

package io.kassign.streams;

import static io.kassign.client.Check.equal;
import static io.kassign.client.Check.isTrue;

import io.kassign.client.LiveServer;
import io.kassign.v1.AssignRequest;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.common.utils.AppInfoParser;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.processor.TaskId;
import org.apache.kafka.streams.processor.assignment.AssignmentConfigs;
import org.apache.kafka.streams.processor.assignment.TaskAssignmentUtils;
import org.apache.kafka.streams.processor.assignment.TaskAssignor;
import org.apache.kafka.streams.processor.assignment.TaskAssignor.TaskAssignment;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** The plug-in against the Kafka jars on the test classpath (3.8.1, then 4.3.1: see the pom). */
final class KafkaApiTest {
    @Test
    @DisplayName("this run uses the Kafka version the pom's matrix entry names")
    void kafkaVersion() {
        final String expected = System.getProperty("kassign.kafka.expected");
        equal(expected, AppInfoParser.getVersion(), "kafka-clients on the classpath");
        equal(expected, StreamsConfig.class.getPackage().getImplementationVersion() == null
                ? expected : StreamsConfig.class.getPackage().getImplementationVersion(), "kafka-streams");
    }

    @Test
    @DisplayName("TaskId: topologyName(), toString and compareTo as the plug-in relies on")
    void taskIdSemantics() {
        equal(null, new TaskId(1, 2).topologyName(), "no named topology");
        equal("1_2", new TaskId(1, 2).toString(), "toString is subtopology_partition");
        isTrue(new TaskId(1, 2).compareTo(new TaskId(1, 10)) < 0, "numeric order, not text");
        equal("1_2", StateToRequest.taskId(new TaskId(1, 2)).getSubtopology() + "_"
                + StateToRequest.taskId(new TaskId(1, 2)).getPartition(), "converted");
    }

    @Test
    @DisplayName("Kafka's own AssignmentConfigs (from a StreamsConfig) reach the request, and the real server's answer passes Kafka's validation")
    void kafkaObjectsThroughTheServer() {
        final Properties props = new Properties();
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, "kafka-objects");
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "localhost:9092");
        props.put(StreamsConfig.NUM_STANDBY_REPLICAS_CONFIG, 1);
        props.put(StreamsConfig.ACCEPTABLE_RECOVERY_LAG_CONFIG, 777L);
        props.put(StreamsConfig.RACK_AWARE_ASSIGNMENT_TAGS_CONFIG, "zone");
        props.put(StreamsConfig.clientTagPrefix("zone"), "eu-1");
        final StreamsConfig config = new StreamsConfig(props);
        final FakeState.App app = PluginTest.sampleApp();
        app.configs = AssignmentConfigs.of(config);

        final AssignRequest request = StateToRequest.convert(app, app.kafkaStreamsStates(true),
                AssignorSettings.from(config.originals()), PluginTest.NOW);
        equal("kafka-objects", request.getGroupId(), "application.id");
        equal(777L, request.getConfigs().getAcceptableRecoveryLag(), "acceptable.recovery.lag");
        equal(1, request.getConfigs().getNumStandbyReplicas(), "num.standby.replicas");
        equal(5_000L, request.getConfigs().getAssignmentTimeBudgetMs(), "half the default deadline");

        final KassignTaskAssignor assignor = new KassignTaskAssignor(PluginTest.CLOCK);
        final Map<String, Object> configs = new java.util.HashMap<>(config.originals());
        configs.put("kassign.target", LiveServer.shared().target());
        assignor.configure(configs);
        final TaskAssignment assignment = assignor.assign(app);
        equal(TaskAssignor.AssignmentError.NONE, TaskAssignmentUtils.validateTaskAssignment(app, assignment),
                "Kafka's validation");
    }
}

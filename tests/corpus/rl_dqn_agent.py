"""DQN agent for discrete-action Gymnasium environments."""
import collections
import random

import numpy as np
import tensorflow as tf

GAMMA = 0.99
TARGET_UPDATE_EVERY = 500

Transition = collections.namedtuple("Transition", "obs action reward next_obs done")


class ReplayBuffer:
    def __init__(self, capacity):
        self.buffer = collections.deque(maxlen=capacity)

    def __len__(self):
        return len(self.buffer)

    def add(self, *args):
        self.buffer.append(Transition(*args))

    def sample(self, batch_size):
        batch = random.sample(self.buffer, batch_size)
        return [np.asarray(field) for field in zip(*batch)]


class DQNAgent:
    def __init__(self, num_actions, obs_dim, lr=1e-3, epsilon=1.0):
        self.num_actions = num_actions
        self.q_net = self._build(obs_dim)
        self.target_net = self._build(obs_dim)
        self.target_net.set_weights(self.q_net.get_weights())
        self.optimizer = tf.keras.optimizers.Adam(lr)
        self.epsilon = epsilon
        self.updates = 0
        self.td_errors = []

    def _build(self, obs_dim):
        return tf.keras.Sequential([
            tf.keras.Input((obs_dim,)),
            tf.keras.layers.Dense(128, activation="relu"),
            tf.keras.layers.Dense(128, activation="relu"),
            tf.keras.layers.Dense(self.num_actions),
        ])

    def act(self, obs):
        if random.random() < self.epsilon:
            return random.randrange(self.num_actions)
        q = self.q_net(obs[None].astype(np.float32))
        return int(tf.argmax(q[0]))

    @tf.function
    def explore_batch(self, obs_batch):
        greedy = tf.argmax(self.q_net(obs_batch), axis=1, output_type=tf.int32)
        if np.random.rand() < self.epsilon:  # TFG103
            return tf.random.uniform(tf.shape(greedy), 0, self.num_actions, dtype=tf.int32)
        return greedy

    @tf.function
    def train_step(self, obs, actions, rewards, next_obs, dones):
        next_q = tf.reduce_max(self.target_net(next_obs), axis=1)
        targets = rewards + GAMMA * (1.0 - dones) * next_q
        with tf.GradientTape() as tape:
            q_taken = tf.gather(self.q_net(obs), actions, batch_dims=1)
            td = targets - q_taken
            loss = tf.reduce_mean(tf.square(td))
        grads = tape.gradient(loss, self.q_net.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.q_net.trainable_variables))
        self.td_errors.append(tf.reduce_mean(tf.abs(td)))  # TFG102
        self.updates += 1  # TFG106
        return loss

    def maybe_sync_target(self, step):
        if step % TARGET_UPDATE_EVERY == 0:
            self.target_net.set_weights(self.q_net.get_weights())


def run(env, agent, buffer, episodes=200, batch_size=64):
    step = 0
    for episode in range(episodes):
        obs, _ = env.reset(seed=random.randint(0, 2**31 - 1))
        done, ret = False, 0.0
        while not done:
            action = agent.act(obs)
            next_obs, reward, terminated, truncated, _ = env.step(action)
            done = terminated or truncated
            buffer.add(obs, action, reward, next_obs, float(terminated))
            obs, ret, step = next_obs, ret + reward, step + 1
            if len(buffer) >= batch_size:
                o, a, r, o2, d = buffer.sample(batch_size)
                agent.train_step(
                    tf.constant(o, tf.float32),
                    tf.constant(a, tf.int32),
                    tf.constant(r, tf.float32),
                    tf.constant(o2, tf.float32),
                    tf.constant(d, tf.float32),
                )
            agent.maybe_sync_target(step)
        agent.epsilon = max(0.05, agent.epsilon * 0.995)
        print(f"episode {episode}: return {ret:.1f} epsilon {agent.epsilon:.3f}")

#version 450
in vec2 v_uv;
in vec4 v_weights;
in float v_height;
layout(binding = 2) uniform sampler2D layers[4];
layout(location = 0) out vec4 color;
void main() {
    vec4 c = texture(layers[0], v_uv * 8.0) * v_weights.x
           + texture(layers[1], v_uv * 8.0) * v_weights.y
           + texture(layers[2], v_uv * 8.0) * v_weights.z;
    if (v_height > 0.9) c = mix(c, vec4(1.0), 0.5);
    color = c;
}
